//! Records the git commit the binary is built from, for every result's provenance
//! (`MASCAR_GIT_COMMIT`: the commit id, `+dirty` when tracked files differ from it, or
//! `unknown` outside a git checkout).

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(id) if !id.is_empty() => {
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
            if dirty {
                format!("{id}+dirty")
            } else {
                id
            }
        }
        _ => "unknown".to_string(),
    };
    println!("cargo:rustc-env=MASCAR_GIT_COMMIT={commit}");
    for path in [".git/HEAD", ".git/index", ".git/refs/heads", "src", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={path}");
    }
}
