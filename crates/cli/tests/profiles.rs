//! The shipped policies in `profiles/` and their generated artifacts: every policy loads
//! (with its `match`/`not_match` examples), and `cordon profile` reproduces the checked-in
//! artifacts byte for byte. `CORDON_BLESS=1 cargo test -p cordon-cli --test profiles`
//! regenerates them after an intended change.
//!
//! Each policy is copied into a fresh directory (with the roots it names) and rendered from
//! there; that directory is written as `${POLICY_DIR}` in the artifacts. The Landlock ABI is
//! pinned to 7 so the output does not depend on the kernel.

mod common;

use std::path::{Path, PathBuf};

const FORMATS: [(&str, &str); 4] = [
    ("seatbelt", "seatbelt.sb"),
    ("bwrap", "bwrap.sh"),
    ("landlock", "landlock.json"),
    ("seccomp", "seccomp.json"),
];

fn profiles_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
}

fn policies() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(profiles_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    v.sort();
    assert!(v.len() >= 5, "expected the shipped policies, found {v:?}");
    v
}

/// A directory holding a copy of the policy and the roots it names.
fn staged(policy: &Path) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for sub in ["notes", "reference"] {
        std::fs::create_dir(d.path().join(sub)).unwrap();
    }
    // A repository's git directory, as `git init` makes it (what `sandbox.git` protects).
    for sub in [
        ".git/hooks",
        ".git/info",
        ".git/objects/info",
        ".git/refs/heads",
    ] {
        std::fs::create_dir_all(d.path().join(sub)).unwrap();
    }
    for file in [".git/HEAD", ".git/config"] {
        std::fs::write(d.path().join(file), "").unwrap();
    }
    std::fs::copy(policy, d.path().join("cordon.toml")).unwrap();
    common::trust(d.path());
    d
}

fn render(dir: &Path, format: &str) -> String {
    // An empty home: the Landlock artifact lists the covers of the operator's own git
    // configuration where it exists (`user_config_mounts`), which would make the shipped
    // artifacts depend on the machine that generated them.
    let home = tempfile::tempdir().unwrap();
    let out = common::command(dir)
        .env("HOME", home.path())
        .args([
            "profile", "--format", format, "--abi", "7", "--arch", "x86_64",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cordon profile --format {format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let real = std::fs::canonicalize(dir).unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .replace(real.to_str().unwrap(), "${POLICY_DIR}")
}

#[test]
fn shipped_policies_load_and_check_their_examples() {
    for p in policies() {
        let d = staged(&p);
        let out = common::command(d.path())
            .args(["check", "--json", "shell", "--", "true"])
            .output()
            .unwrap();
        // Loaded: the answer is a decision (0 allow, 1 ask, 2 deny), not a failure (125).
        assert!(
            matches!(out.status.code(), Some(0..=2)),
            "{}: {}",
            p.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn generated_artifacts_are_up_to_date() {
    let bless = std::env::var_os("CORDON_BLESS").is_some();
    let mut stale = Vec::new();
    for p in policies() {
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        let d = staged(&p);
        let out_dir = profiles_dir().join("generated").join(&name);
        for (format, file) in FORMATS {
            let text = render(d.path(), format);
            assert_eq!(
                text,
                render(d.path(), format),
                "{name} {format}: not deterministic"
            );
            let path = out_dir.join(file);
            if bless {
                std::fs::create_dir_all(&out_dir).unwrap();
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(path.display().to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "generated artifacts differ from `cordon profile` (run `CORDON_BLESS=1 cargo test -p cordon-cli --test profiles` after an intended change):\n{}",
        stale.join("\n")
    );
}

#[test]
fn seatbelt_refuses_paths_it_cannot_pass_safely() {
    let d = tempfile::tempdir().unwrap();
    let bad = d.path().join("quo\"te");
    std::fs::create_dir(&bad).unwrap();
    std::fs::write(
        d.path().join("cordon.toml"),
        "version = 1\n[sandbox.paths.w]\nroot = 'quo\"te'\nmode = \"rw\"\n",
    )
    .unwrap();
    common::trust(d.path());
    let out = common::command(d.path())
        .args(["profile", "--format", "seatbelt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&out.stderr).starts_with("cordon: "));
    assert!(out.stdout.is_empty());
}

/// `cordon profile` without `--format`: the effective access of each path once every rule and
/// mount is applied. The bwrap script binds `.git` writable before the read-only binds of its
/// configuration that win; here `.git/config` and `.git/hooks` are read-only (their programs
/// may still run: `rx`), the workspace writable, each with the key behind it; then the
/// network and the refused calls.
#[test]
fn the_default_output_is_the_effective_access() {
    let d = staged(&profiles_dir().join("coding-agent.toml"));
    let out = common::command(d.path()).arg("profile").output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = common::stdout(&out);
    let line = |path: &Path| {
        let shown = path.display().to_string();
        text.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(shown.as_str()))
            .unwrap_or_else(|| panic!("no line for {shown}:\n{text}"))
            .to_string()
    };
    let root = std::fs::canonicalize(d.path()).unwrap();
    let ws = line(&root);
    assert!(ws.trim_start().starts_with("rw"), "{ws}\n{text}");
    assert!(ws.contains("sandbox.paths.project"), "{ws}");
    for sub in [".git/config", ".git/hooks"] {
        let l = line(&root.join(sub));
        let access = l.split_whitespace().next().unwrap_or_default();
        assert!(
            access == "ro" || access == "rx",
            "{sub} is not read-only: {l}\n{text}"
        );
        assert!(
            l.contains("sandbox.git"),
            "{sub} does not name its key: {l}"
        );
    }
    // What a top-down reader of the bwrap script would have got wrong.
    let script = render(d.path(), "bwrap");
    let bind = script.find("--bind ${POLICY_DIR}/.git ");
    let ro = script.find("--ro-bind ${POLICY_DIR}/.git/config ");
    assert!(bind.is_some() && ro.is_some() && bind < ro, "{script}");
    assert!(text.contains("\nnetwork:\n"), "{text}");
    assert!(text.contains("sandbox.network"), "{text}");
    assert!(text.contains("refused system calls"), "{text}");
    assert!(
        text.lines().any(|l| l.trim_start().starts_with("ptrace ")),
        "{text}"
    );
}
