//! The checked-in man pages (`docs/man/`) are what the binary renders from its own clap
//! command (`cordon __man DIR`): a changed option or subcommand fails here until the pages are
//! regenerated, with
//!
//! ```sh
//! CORDON_BLESS=1 cargo test -p cordon-cli --test manpage
//! ```

mod common;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The `*.1` files in `dir`, by name.
fn pages(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".1") {
            out.insert(name, std::fs::read_to_string(&path).unwrap());
        }
    }
    out
}

fn checked_in() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/man")
}

#[test]
fn man_pages_are_current() {
    let out = tempfile::tempdir().unwrap();
    let o = common::cordon(out.path(), &["__man", out.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let rendered = pages(out.path());
    assert!(
        rendered.contains_key("cordon.1") && rendered.contains_key("cordon-exec.1"),
        "{:?}",
        rendered.keys()
    );
    let dir = checked_in();
    if std::env::var_os("CORDON_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(&dir).unwrap();
        for name in pages(&dir).keys() {
            if !rendered.contains_key(name) {
                std::fs::remove_file(dir.join(name)).unwrap();
            }
        }
        for (name, text) in &rendered {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    let current = pages(&dir);
    let regenerate = "regenerate with `CORDON_BLESS=1 cargo test -p cordon-cli --test manpage` and commit docs/man/";
    let names = |m: &BTreeMap<String, String>| m.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&current),
        names(&rendered),
        "docs/man/ does not hold one page per subcommand; {regenerate}"
    );
    for (name, text) in &rendered {
        assert!(
            current[name] == *text,
            "docs/man/{name} differs from what `cordon __man` renders; {regenerate}"
        );
    }
}

#[test]
fn the_main_page_says_what_clap_does_not() {
    let out = tempfile::tempdir().unwrap();
    let o = common::cordon(out.path(), &["__man", out.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let main = std::fs::read_to_string(out.path().join("cordon.1")).unwrap();
    for section in [
        ".SH SUBCOMMANDS",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH FILES",
    ] {
        assert!(main.contains(section), "no {section} in cordon.1");
    }
    // A hidden subcommand has no page and is not listed.
    assert!(!main.contains("__man"));
    assert!(!out.path().join("cordon-__man.1").exists());
}

/// Issue 21, class 1: the pages are written into a directory the operator names, often in the
/// project (docs/man/), which a sandboxed command can write. A link it planted at a page's
/// name (`cordon-exec.1 -> ~/.bashrc`) must not get the page written over its target: refused,
/// naming the link, the target untouched.
#[test]
fn pages_are_never_written_through_a_planted_link() {
    let out = tempfile::tempdir().unwrap();
    let victim = out.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    for name in ["cordon.1", "cordon-exec.1"] {
        let dir = out.path().join(name.replace('.', "-"));
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&victim, dir.join(name)).unwrap();
        let o = common::cordon(out.path(), &["__man", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(125), "{name}: {}", common::stderr(&o));
        assert!(
            common::stderr(&o)
                .contains(&format!("{} is a symbolic link", dir.join(name).display())),
            "{name}: {}",
            common::stderr(&o)
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep", "{name}");
    }
}

#[test]
fn completions_for_each_shell() {
    let d = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "complete -F _cordon"),
        ("zsh", "#compdef cordon"),
        ("fish", "complete -c cordon"),
        ("elvish", "edit:completion:arg-completer[cordon]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = common::cordon(d.path(), &["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", common::stderr(&o));
        let text = common::stdout(&o);
        assert!(text.contains(marker), "{shell}: no `{marker}` in\n{text}");
        // Every visible subcommand is offered; the hidden one is not.
        for sub in ["exec", "check", "policy", "init", "completions"] {
            assert!(text.contains(sub), "{shell}: `{sub}` is not completed");
        }
        assert!(!text.contains("__man"), "{shell}: offers the hidden __man");
    }
    let o = common::cordon(d.path(), &["completions", "tcsh"]);
    assert_eq!(o.status.code(), Some(125));
}

/// The bash script is real bash: it loads, and completes `cordon ex` to `exec`.
#[test]
fn bash_completion_completes() {
    let d = tempfile::tempdir().unwrap();
    let o = common::cordon(d.path(), &["completions", "bash"]);
    assert!(o.status.success());
    let script = d.path().join("cordon.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let probe = format!(
        "source {}; COMP_WORDS=(cordon ex); COMP_CWORD=1; COMP_LINE='cordon ex'; COMP_POINT=9; _cordon cordon ex cordon; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let o = std::process::Command::new("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .expect("bash is needed for this test (Debian package `bash`)");
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert_eq!(common::stdout(&o).trim(), "exec");
}
