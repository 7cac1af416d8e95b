//! The crate's layers only point down (issue 15 §7): plain types at the bottom, the Mascar
//! blocks' contract and behavioural twins above them, the RTL importing only that contract,
//! the machine taking its blocks through one trait, and the engine chosen once at the top
//! (`engine.rs`). This test reads `src/` and fails on an import that breaks the layering.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module of each `crate::a::…` path outside `#[cfg(test)]` code and comments.
fn imports(src: &str) -> BTreeSet<String> {
    let code = src.split("#[cfg(test)]").next().unwrap_or("");
    let mut out = BTreeSet::new();
    for line in code.lines() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                // `use crate::{a::b, c};` (one line is enough for this crate's style).
                for item in group.split('}').next().unwrap_or("").split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

fn walk(dir: &Path, root: &Path, graph: &mut BTreeMap<String, BTreeSet<String>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, root, graph);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap();
            let top = rel.components().next().unwrap().as_os_str().to_string_lossy();
            let top = top.trim_end_matches(".rs").to_string();
            if top == "main" || top == "lib" {
                continue;
            }
            let deps = imports(&std::fs::read_to_string(&p).unwrap());
            let entry = graph.entry(top.clone()).or_default();
            entry.extend(deps.into_iter().filter(|d| *d != top));
        }
    }
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut g = BTreeMap::new();
    walk(&root, &root, &mut g);
    g
}

/// Every module `m` reaches through imports.
fn reach(g: &BTreeMap<String, BTreeSet<String>>, m: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![m.to_string()];
    while let Some(x) = todo.pop() {
        for d in g.get(&x).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let g = graph();
    for m in g.keys() {
        assert!(
            !reach(&g, m).contains(m),
            "module `{m}` reaches itself through its imports: {:?}",
            g[m]
        );
    }
}

#[test]
fn the_rtl_sees_only_the_blocks_contract_and_the_machine_never_sees_the_rtl() {
    let g = graph();
    let allowed = |m: &str, ok: &[&str]| {
        let extra: Vec<_> = g[m].iter().filter(|d| !ok.contains(&d.as_str())).collect();
        assert!(
            extra.is_empty(),
            "`{m}` imports {extra:?}; it may import only {ok:?}"
        );
    };
    allowed("rtl", &["mascar", "output"]);
    allowed("mascar", &["output", "sched"]);
    allowed("config", &["input", "mascar", "sched"]);
    for low in ["gpu", "mascar", "config", "workload", "sched", "stats"] {
        let r = reach(&g, low);
        assert!(
            !r.contains("rtl") && !r.contains("engine"),
            "`{low}` reaches {:?}: the engine is chosen above it",
            r.intersection(&["rtl".to_string(), "engine".to_string()].into())
                .collect::<Vec<_>>()
        );
    }
    // The engine is the one place below the runners that joins the machine and the RTL.
    let both: Vec<_> = g
        .iter()
        .filter(|(_, d)| d.contains("gpu") && d.contains("rtl"))
        .map(|(m, _)| m.as_str())
        .collect();
    assert_eq!(both, ["engine"]);
}
