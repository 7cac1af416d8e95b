//! kernelslist.g parsing and path resolution.

use std::path::Path;

use super::traces_dir;
use crate::workload::trace::kernelslist::{parse, parse_str, resolve};
use crate::workload::trace::ListEntry;

#[test]
fn the_vectoradd_list_in_order() {
    let dir = traces_dir().join("vectoradd-100-32-trace");
    let list = parse(dir.join("kernelslist.g")).unwrap();
    let memcpy = |addr, bytes| ListEntry::Memcpy {
        direction: "HtoD".into(),
        addr,
        bytes,
    };
    assert_eq!(
        list,
        vec![
            memcpy(0x7f2b2d500000, 400),
            memcpy(0x7f2b2d500200, 400),
            memcpy(0x7f2b2d500400, 400),
            ListEntry::Kernel(dir.join("kernel-1.traceg")),
        ]
    );
    assert_eq!(
        resolve(&dir).unwrap(),
        list,
        "a directory means its kernelslist.g"
    );
    let single = dir.join("kernel-1.traceg");
    assert_eq!(resolve(&single).unwrap(), vec![ListEntry::Kernel(single.clone())]);
    assert!(single.is_file());
}

#[test]
fn list_errors_are_positioned() {
    let e = parse_str("kernel-1.traceg\n\nMemcpyHtoD,0xzz,4\n", "k.g", Path::new("d")).unwrap_err();
    assert_eq!((e.line, e.column), (3, 12));
    let e = parse_str("MemcpyHtoD,0x10\n", "k.g", Path::new("d")).unwrap_err();
    assert_eq!((e.line, e.column), (1, 1));
    let e = parse_str("  launch foo\n", "k.g", Path::new("d")).unwrap_err();
    assert_eq!((e.line, e.column), (1, 3));
    assert_eq!(
        e.to_string(),
        "k.g:1:3: unrecognised kernelslist line `launch foo`"
    );
    let e = resolve(traces_dir().join("no-such-dir/kernelslist.g")).unwrap_err();
    assert_eq!(e.line, 0);
}
