//! The audit renderers: golden files for every artifact, a parser for the SBPL output, the
//! injection cases, OCI schema checks, and the OCI argument semantics checked against
//! cordon's own.
//!
//! The Linux artifacts (OCI seccomp, Landlock) are built only on Linux, so their tests are
//! too; the Seatbelt tests build everywhere.
//!
//! Golden files live in `tests/golden/`. After an intended change, regenerate them with
//! `CORDON_BLESS=1 cargo test -p cordon-ossandbox --test render` and review the diff.

use std::collections::BTreeSet;
use std::path::Path;
#[cfg(target_os = "linux")]
use std::path::PathBuf;

use crate::render::seatbelt;
#[cfg(target_os = "linux")]
use crate::render::{landlock, oci};
#[cfg(target_os = "linux")]
use crate::seccomp::{self, ArgCheck, SyscallRule};
use crate::Error;
use crate::{Access, PathRule, Profile, Protected};
use cordon_policy::{Limits, Network, Policy};
#[cfg(target_os = "linux")]
use serde_json::Value;

// ---------------------------------------------------------------------------------------
// Golden files

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("CORDON_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "golden file {} unreadable ({e}); create it with CORDON_BLESS=1",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the rendered output, first at line {}:\n  golden: {:?}\n  actual: {:?}\n\
             If the change is intended, rerun with CORDON_BLESS=1 and review the diff.",
            path.display(),
            line + 1,
            expected.lines().nth(line),
            actual.lines().nth(line)
        );
    }
}

// ---------------------------------------------------------------------------------------
// Profiles

fn rule(path: &str, access: Access, origin: &str) -> PathRule {
    PathRule {
        path: path.into(),
        access,
        origin: origin.into(),
    }
}

const RW: Access = Access {
    write: true,
    exec: false,
    device: false,
};
const RWX: Access = Access {
    write: true,
    exec: true,
    device: false,
};

fn protected(path: &str, origin: &str) -> Protected {
    Protected {
        path: path.into(),
        origin: origin.into(),
    }
}

/// A coding-agent workspace: system paths, a writable executable workspace, read-only notes,
/// the private TMPDIR, git's hooks and config protected, no network.
fn workspace_profile() -> Profile {
    let mut rules = vec![
        rule("/usr", Access::READ_EXEC, "sandbox.system_read (programs)"),
        rule(
            "/etc/passwd",
            Access::READ,
            "sandbox.system_read (configuration)",
        ),
        rule("/dev/null", Access::DEVICE, "sandbox.system_read (devices)"),
        rule("/home/dev/project", RWX, "sandbox.paths.workspace (rw)"),
        rule("/home/dev/notes", Access::READ, "sandbox.paths.notes (ro)"),
        rule("/opt/docs", Access::READ, "sandbox.extra_read"),
        rule(
            "/tmp/cordon-run",
            RW,
            "private TMPDIR (created for this run)",
        ),
    ];
    rules.sort();
    Profile {
        rules,
        protected: vec![
            protected(
                "/home/dev/project/.git/config",
                "sandbox.protected (in sandbox.paths.workspace)",
            ),
            protected(
                "/home/dev/project/.git/hooks",
                "sandbox.protected (in sandbox.paths.workspace)",
            ),
        ],
        network: Network::Deny,
        limits: Limits::default(),
        forwards: Vec::new(),
    }
}

/// No system paths, network allowed, a root whose name needs quoting in a shell.
fn network_profile() -> Profile {
    Profile {
        rules: vec![rule(
            "/Users/dev/My Project (copy); x=1",
            RW,
            "sandbox.paths.scratch (rw)",
        )],
        protected: vec![],
        network: Network::Allow,
        limits: Limits::default(),
        forwards: Vec::new(),
    }
}

fn default_policy_profile(dir: &Path) -> Profile {
    let policy = Policy::parse(cordon_policy::DEFAULT_POLICY, "default.toml", dir).unwrap();
    Profile::from_policy(&policy)
}

// ---------------------------------------------------------------------------------------
// A small SBPL reader: balanced parentheses, known forms only.

#[derive(Debug, Clone, PartialEq)]
enum Sx {
    List(Vec<Sx>),
    Sym(String),
    Str(String),
    Regex(String),
    Int(i64),
}

fn parse_sbpl(text: &str) -> Result<Vec<Sx>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let mut stack: Vec<Vec<Sx>> = vec![vec![]];
    let string = |i: &mut usize| -> Result<String, String> {
        // at the opening quote
        *i += 1;
        let start = *i;
        while *i < chars.len() && chars[*i] != '"' {
            if chars[*i] == '\\' || chars[*i] == '\n' {
                return Err(format!("escape or newline inside a string at {}", *i));
            }
            *i += 1;
        }
        if *i == chars.len() {
            return Err("unterminated string".into());
        }
        let s: String = chars[start..*i].iter().collect();
        *i += 1;
        Ok(s)
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ';' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            c if c.is_whitespace() => i += 1,
            '(' => {
                stack.push(vec![]);
                i += 1;
            }
            ')' => {
                let list = stack.pop().ok_or("unbalanced )")?;
                stack
                    .last_mut()
                    .ok_or(format!("unbalanced ) at {i}"))?
                    .push(Sx::List(list));
                i += 1;
            }
            '"' => {
                let s = string(&mut i)?;
                stack.last_mut().unwrap().push(Sx::Str(s));
            }
            '#' if chars.get(i + 1) == Some(&'"') => {
                i += 1;
                let s = string(&mut i)?;
                stack.last_mut().unwrap().push(Sx::Regex(s));
            }
            _ => {
                let start = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !matches!(chars[i], '(' | ')' | '"' | ';')
                {
                    i += 1;
                }
                let tok: String = chars[start..i].iter().collect();
                let item = match tok.parse::<i64>() {
                    Ok(n) => Sx::Int(n),
                    Err(_) => Sx::Sym(tok),
                };
                stack.last_mut().unwrap().push(item);
            }
        }
    }
    if stack.len() != 1 {
        return Err(format!("{} unclosed (", stack.len() - 1));
    }
    Ok(stack.pop().unwrap())
}

const OPERATIONS: &[&str] = &[
    "file-ioctl",
    "file-link",
    "file-map-executable",
    "file-read*",
    "file-read-metadata",
    "file-test-existence",
    "file-write*",
    "file-write-data",
    "ipc-posix-shm-read*",
    "mach-lookup",
    "network*",
    "network-outbound",
    "process-exec",
    "process-fork",
    "process-info*",
    "pseudo-tty",
    "signal",
    "sysctl-read",
    "system-socket",
];

/// Checks the forms of a rendered profile and returns the parameters it references.
fn check_sbpl(text: &str) -> BTreeSet<String> {
    let forms = parse_sbpl(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        forms[0],
        Sx::List(vec![Sx::Sym("version".into()), Sx::Int(1)])
    );
    assert_eq!(
        forms[1],
        Sx::List(vec![Sx::Sym("deny".into()), Sx::Sym("default".into())])
    );
    let mut params = BTreeSet::new();
    for form in &forms[2..] {
        let Sx::List(items) = form else {
            panic!("top-level atom {form:?}")
        };
        match &items[0] {
            Sx::Sym(s) if s == "allow" || s == "deny" => {}
            other => panic!("unknown top-level form {other:?}"),
        }
        let ops: Vec<&Sx> = items[1..]
            .iter()
            .take_while(|i| matches!(i, Sx::Sym(_)))
            .collect();
        assert!(!ops.is_empty(), "a rule without an operation: {form:?}");
        for op in &ops {
            let Sx::Sym(op) = op else { unreachable!() };
            assert!(OPERATIONS.contains(&op.as_str()), "unknown operation {op}");
            assert_ne!(op, "default", "default only in the second form");
            // Hard links are never allowed (see the renderer's docs on `file-link`).
            if op == "file-link" {
                assert_eq!(items[0], Sx::Sym("deny".into()), "{form:?}");
            }
        }
        for filter in &items[1 + ops.len()..] {
            check_filter(filter, &mut params);
        }
    }
    params
}

fn check_filter(filter: &Sx, params: &mut BTreeSet<String>) {
    let Sx::List(f) = filter else {
        panic!("a filter must be a form: {filter:?}")
    };
    // sandbox.network = "proxy": (remote ip "localhost:PORT"), the proxy's port only.
    if let [Sx::Sym(head), Sx::Sym(kind), Sx::Str(addr)] = f.as_slice() {
        assert_eq!(
            (head.as_str(), kind.as_str()),
            ("remote", "ip"),
            "{filter:?}"
        );
        let port = addr
            .strip_prefix("localhost:")
            .unwrap_or_else(|| panic!("{addr}"));
        assert!(port.parse::<u16>().is_ok(), "{addr}");
        return;
    }
    let (Some(Sx::Sym(head)), 2) = (f.first(), f.len()) else {
        panic!("bad filter {filter:?}")
    };
    match (head.as_str(), &f[1]) {
        ("subpath" | "literal", Sx::Str(p)) => {
            assert!(p.starts_with('/'), "relative path {p}")
        }
        ("subpath" | "literal", Sx::List(inner)) => match inner.as_slice() {
            [Sx::Sym(p), Sx::Str(name)] if p == "param" => {
                params.insert(name.clone());
            }
            _ => panic!("bad path argument {inner:?}"),
        },
        ("regex", Sx::Regex(r)) => assert!(r.starts_with('^') && r.ends_with('$'), "{r}"),
        ("global-name" | "ipc-posix-name", Sx::Str(_)) => {}
        ("sysctl-name" | "sysctl-name-prefix", Sx::Str(name)) => {
            assert!(!name.starts_with("kern.procargs"), "{name}")
        }
        ("target", Sx::Sym(t)) => assert_eq!(t, "same-sandbox"),
        _ => panic!("unknown filter {filter:?}"),
    }
}

fn check_seatbelt(sb: &seatbelt::Seatbelt) {
    let used = check_sbpl(&sb.text);
    let given: BTreeSet<String> = sb.params.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        used, given,
        "every parameter is given, every given one is used"
    );
    assert_eq!(given.len(), sb.params.len(), "parameter names are unique");
    for (k, v) in &sb.params {
        assert!(
            k.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'),
            "{k}"
        );
        assert!(!sb.text.contains(v.as_str()), "{v} spliced into the text");
    }
    // `-D` arguments are well formed: one argument each, `-DNAME=VALUE`, in order.
    let args = sb.args();
    assert_eq!(args[0], "-p");
    assert_eq!(args[1], sb.text);
    assert_eq!(args.len(), 2 + sb.params.len());
    for (arg, (k, v)) in args[2..].iter().zip(&sb.params) {
        assert_eq!(arg, &format!("-D{k}={v}"));
    }
}

// ---------------------------------------------------------------------------------------
// Seatbelt

#[test]
fn seatbelt_golden_workspace() {
    let sb = seatbelt::render(&workspace_profile()).unwrap();
    check_seatbelt(&sb);
    golden("seatbelt_workspace.sb", &sb.audit());
}

#[test]
fn seatbelt_golden_network_allowed_no_system_paths() {
    let sb = seatbelt::render(&network_profile()).unwrap();
    check_seatbelt(&sb);
    assert!(sb.text.contains("(allow network*)"));
    assert!(!sb.text.contains("\"/usr\""));
    golden("seatbelt_network.sb", &sb.audit());
}

#[test]
fn seatbelt_golden_network_proxy() {
    let sb = seatbelt::render(&Profile {
        network: Network::Proxy,
        ..workspace_profile()
    })
    .unwrap();
    check_seatbelt(&sb);
    // Outbound to the proxy's port on localhost only: no network*, no DNS service.
    assert!(sb
        .text
        .contains("(allow network-outbound (remote ip \"localhost:3128\"))"));
    assert!(!sb.text.contains("(allow network*)"));
    assert!(!sb.text.contains("mDNSResponder"));
    golden("seatbelt_network_proxy.sb", &sb.audit());
}

#[test]
fn seatbelt_shape() {
    let sb = seatbelt::render(&workspace_profile()).unwrap();
    let t = &sb.text;
    // Linux system paths are replaced by the macOS list.
    assert!(!t.contains("/etc/passwd\"") || t.contains("/private/etc/passwd"));
    assert!(!t.contains("\"/etc/"));
    assert!(t.contains("(subpath \"/System\")"));
    // Protected denies come after every allow.
    let last_allow = t.rfind("(allow").unwrap();
    let first_deny = t.find("(deny file-").unwrap();
    assert!(first_deny > last_allow);
    // Each policy rule says where it came from.
    for origin in [
        "; from sandbox.paths.workspace (rw)\n(allow file-read* file-write* process-exec file-map-executable (subpath (param \"RW_0\")))",
        "; from sandbox.paths.notes (ro)\n(allow file-read* (subpath (param \"RO_0\")))",
        "; from sandbox.protected (in sandbox.paths.workspace)\n(deny file-write* file-link (literal (param \"PROTECTED_0\")) (subpath (param \"PROTECTED_0\")))",
    ] {
        assert!(t.contains(origin), "missing {origin}");
    }
    // The writable root and the directories down to a protected path stay in place.
    assert!(sb
        .params
        .contains(&("PROTECTED_PARENT_0".into(), "/home/dev/project".into())));
    assert!(sb
        .params
        .contains(&("PROTECTED_PARENT_1".into(), "/home/dev/project/.git".into())));
    // Hard links: never allowed, denied on protected paths explicitly.
    assert!(!t.contains("(allow file-link") && !t.contains(" file-link (subpath (param \"RW"));
    assert!(!t.contains("(allow network"));
}

#[test]
fn seatbelt_refuses_unsafe_paths() {
    for (bad, what) in [
        ("/home/dev/a\"b", "double quote"),
        ("/home/dev/a\\b", "backslash"),
        ("/home/dev/a\0b", "NUL"),
        ("/home/dev/a\nb", "newline"),
    ] {
        let mut p = network_profile();
        p.rules = vec![rule(bad, RW, "sandbox.paths.evil (rw)")];
        let err = seatbelt::render(&p).unwrap_err();
        let Error::UnsafePath { path, origin, .. } = &err else {
            panic!("not an unsafe path: {err:?}");
        };
        assert_eq!(path, bad);
        assert_eq!(origin, "sandbox.paths.evil (rw)");
        let msg = err.to_string();
        assert!(msg.contains(what), "{msg}");
        assert!(!msg.contains('\n') && !msg.contains('\0'), "{msg:?}");

        let mut p = workspace_profile();
        p.protected = vec![protected(bad, "sandbox.protected")];
        assert!(
            matches!(seatbelt::render(&p), Err(Error::UnsafePath { .. })),
            "protected {bad:?}"
        );
    }
}

#[test]
fn seatbelt_takes_odd_but_safe_paths_as_params() {
    for odd in [
        "/w/a(b)",
        "/w/with space",
        "/w/semi;colon",
        "/w/$(x)",
        "/w/é",
    ] {
        let mut p = network_profile();
        p.rules = vec![rule(odd, RW, "sandbox.paths.w (rw)")];
        let sb = seatbelt::render(&p).unwrap();
        check_seatbelt(&sb);
        assert_eq!(sb.params[0].1, odd);
    }
}

#[test]
fn seatbelt_origins_cannot_inject_rules() {
    let mut p = network_profile();
    p.rules[0].origin = "sandbox.paths.x\n(allow file-write* (subpath \"/\"))\n; (rw)".into();
    let sb = seatbelt::render(&p).unwrap();
    check_seatbelt(&sb);
    assert!(!sb.text.contains("\n(allow file-write* (subpath \"/\"))"));
    assert!(sb.text.contains("; from sandbox.paths.x\\n(allow"));
}

#[test]
fn seatbelt_for_the_default_policy() {
    let dir = tempfile::tempdir().unwrap();
    let profile = default_policy_profile(dir.path());
    let sb = seatbelt::render(&profile).unwrap();
    check_seatbelt(&sb);
    let real = std::fs::canonicalize(dir.path())
        .unwrap()
        .display()
        .to_string();
    // Seatbelt sees /tmp and /var at their real macOS location.
    let expected = if ["/tmp/", "/var/"].iter().any(|t| real.starts_with(t)) {
        format!("/private{real}")
    } else {
        real
    };
    assert_eq!(sb.params, vec![("RW_0".into(), expected)]);
    assert!(sb.text.contains("(subpath \"/usr\")"));
    assert_eq!(seatbelt::render(&profile).unwrap(), sb, "deterministic");
}

// ---------------------------------------------------------------------------------------
// OCI seccomp

#[cfg(target_os = "linux")]
fn synthetic_rules() -> Vec<SyscallRule> {
    vec![
        SyscallRule {
            name: "socketpair",
            errno: 1,
            when: vec![vec![ArgCheck::Ne32 { index: 0, value: 1 }]],
            why: "only unix socket pairs",
        },
        SyscallRule {
            name: "clone",
            errno: 1,
            when: vec![
                vec![ArgCheck::HasBits {
                    index: 0,
                    mask: 0x1000_0000,
                }],
                vec![ArgCheck::HasBits {
                    index: 0,
                    mask: 0x2000_0000,
                }],
            ],
            why: "namespace flags",
        },
        SyscallRule {
            name: "ioctl",
            errno: 1,
            when: vec![vec![ArgCheck::Eq32 {
                index: 1,
                value: 0x5412,
            }]],
            why: "TIOCSTI",
        },
        SyscallRule {
            name: "fchmodat",
            errno: 1,
            when: vec![vec![ArgCheck::HasBits32 {
                index: 2,
                mask: 0o4000,
            }]],
            why: "setuid bit",
        },
        SyscallRule {
            name: "clone3",
            errno: 38,
            when: vec![],
            why: "ENOSYS so libc falls back",
        },
    ]
}

#[cfg(target_os = "linux")]
const OCI_OPS: &[&str] = &[
    "SCMP_CMP_NE",
    "SCMP_CMP_LT",
    "SCMP_CMP_LE",
    "SCMP_CMP_EQ",
    "SCMP_CMP_GE",
    "SCMP_CMP_GT",
    "SCMP_CMP_MASKED_EQ",
];

/// The runtime-spec's `linux.seccomp` object, as crun and runc read it.
#[cfg(target_os = "linux")]
fn check_oci_schema(v: &Value) {
    let top = v.as_object().expect("an object");
    for k in top.keys() {
        assert!(
            ["defaultAction", "architectures", "syscalls"].contains(&k.as_str()),
            "unexpected top-level key {k} (defaultErrnoRet is refused with SCMP_ACT_ALLOW)"
        );
    }
    assert_eq!(top["defaultAction"], "SCMP_ACT_ALLOW");
    let arches = top["architectures"].as_array().unwrap();
    assert_eq!(arches.len(), 1);
    assert!(arches[0].as_str().unwrap().starts_with("SCMP_ARCH_"));
    let syscalls = top["syscalls"].as_array().unwrap();
    assert!(!syscalls.is_empty());
    let mut last = "";
    for s in syscalls {
        let s = s.as_object().unwrap();
        for k in s.keys() {
            assert!(
                ["names", "action", "errnoRet", "args", "comment"].contains(&k.as_str()),
                "unexpected key {k}"
            );
        }
        let names = s["names"].as_array().unwrap();
        assert_eq!(names.len(), 1);
        let name = names[0].as_str().unwrap();
        assert!(name >= last, "sorted by name: {name} after {last}");
        last = name;
        assert_eq!(s["action"], "SCMP_ACT_ERRNO");
        assert!(s["errnoRet"].as_u64().unwrap() > 0);
        assert!(!s["comment"].as_str().unwrap().is_empty());
        if let Some(args) = s.get("args") {
            let args = args.as_array().unwrap();
            assert!(!args.is_empty() && args.len() <= 6);
            for a in args {
                let a = a.as_object().unwrap();
                assert_eq!(a.len(), 4, "{a:?}");
                assert!(a["index"].as_u64().unwrap() < 6);
                a["value"].as_u64().unwrap();
                a["valueTwo"].as_u64().unwrap();
                assert!(OCI_OPS.contains(&a["op"].as_str().unwrap()));
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn oci_golden_synthetic() {
    let v = oci::render(&synthetic_rules(), oci::OciArch::X86_64);
    check_oci_schema(&v);
    golden("oci_synthetic.json", &oci::to_string_pretty(&v));
}

#[cfg(target_os = "linux")]
#[test]
fn oci_golden_cordon_rules() {
    for (network, file) in [
        (Network::Deny, "seccomp_x86_64_network_deny.json"),
        (Network::Allow, "seccomp_x86_64_network_allow.json"),
        (Network::Proxy, "seccomp_x86_64_network_proxy.json"),
    ] {
        let v = oci::render(&seccomp::rules(network), oci::OciArch::X86_64);
        check_oci_schema(&v);
        golden(file, &oci::to_string_pretty(&v));
    }
    let v = oci::render(&seccomp::rules(Network::Deny), oci::OciArch::Aarch64);
    check_oci_schema(&v);
    golden(
        "seccomp_aarch64_network_deny.json",
        &oci::to_string_pretty(&v),
    );
}

#[cfg(target_os = "linux")]
#[test]
fn oci_names_are_real_syscalls_and_every_rule_is_rendered() {
    let rules = seccomp::rules(Network::Deny);
    let v = oci::render(&rules, oci::OciArch::X86_64);
    let names: BTreeSet<&str> = v["syscalls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["names"][0].as_str().unwrap())
        .collect();
    let expected: BTreeSet<&str> = rules.iter().map(|r| r.name).collect();
    assert_eq!(names, expected);
    for name in names {
        let x86_only = oci::X86_64_ONLY.contains(&name);
        if cfg!(target_arch = "x86_64") || !x86_only {
            assert!(
                seccomp::syscall_number(name).is_some(),
                "{name} is not a syscall"
            );
        }
    }
    if cfg!(target_arch = "x86_64") {
        for name in oci::X86_64_ONLY {
            assert!(seccomp::syscall_number(name).is_some(), "{name}");
        }
    }
}

/// What libseccomp does with one OCI arg comparison (64-bit arguments).
#[cfg(target_os = "linux")]
fn oci_cmp(a: &Value, args: &[u64; 6]) -> bool {
    let x = args[a["index"].as_u64().unwrap() as usize];
    let v = a["value"].as_u64().unwrap();
    let v2 = a["valueTwo"].as_u64().unwrap();
    match a["op"].as_str().unwrap() {
        "SCMP_CMP_NE" => x != v,
        "SCMP_CMP_EQ" => x == v,
        "SCMP_CMP_MASKED_EQ" => x & v == v2,
        op => panic!("unexpected {op}"),
    }
}

/// What cordon's filter does with one check.
#[cfg(target_os = "linux")]
fn cordon_cmp(c: &ArgCheck, args: &[u64; 6]) -> bool {
    match *c {
        ArgCheck::Eq32 { index, value } => args[index as usize] as u32 == value,
        ArgCheck::Ne32 { index, value } => args[index as usize] as u32 != value,
        ArgCheck::HasBits { index, mask } => args[index as usize] & mask == mask,
        ArgCheck::HasBits32 { index, mask } => args[index as usize] as u32 & mask == mask,
    }
}

#[cfg(target_os = "linux")]
#[test]
fn oci_args_deny_what_cordon_denies() {
    let mut rules = seccomp::rules(Network::Deny);
    rules.extend(synthetic_rules());
    let samples: Vec<u64> = vec![
        0,
        1,
        2,
        0x5412,
        0x541C,
        0x1_0000_5412,
        0xffff_ffff_0000_0001,
        0o4000,
        0o2000,
        0o6755,
        0x1_0000_0000 | 0o4000,
        0x0002_0000,
        0x1000_0000,
        0x7e02_0000,
        0x1_0000_0001,
        u64::MAX,
    ];
    for rule in rules.iter().filter(|r| !r.when.is_empty()) {
        let v = oci::render(std::slice::from_ref(rule), oci::OciArch::X86_64);
        let entries = v["syscalls"].as_array().unwrap();
        for &s in &samples {
            for index in 0..6 {
                let mut args = [0u64; 6];
                args[index] = s;
                let cordon = rule
                    .when
                    .iter()
                    .any(|alt| alt.iter().all(|c| cordon_cmp(c, &args)));
                let runtime = entries.iter().any(|e| {
                    e["args"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|a| oci_cmp(a, &args))
                });
                // A runtime denies at least what cordon denies; more only for Ne32 with high
                // bits set (see the module docs).
                assert!(
                    runtime || !cordon,
                    "{}: runtime allows {args:x?}, cordon denies",
                    rule.name
                );
                if runtime && !cordon {
                    assert!(
                        s >> 32 != 0
                            && rule
                                .when
                                .iter()
                                .flatten()
                                .any(|c| matches!(c, ArgCheck::Ne32 { .. })),
                        "{}: runtime denies {args:x?}, cordon allows",
                        rule.name
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Landlock

/// A profile over real paths in `dir`: a directory, a file, a missing path.
#[cfg(target_os = "linux")]
fn landlock_profile(dir: &Path) -> Profile {
    let ws = dir.join("ws");
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    std::fs::write(dir.join("tty"), "").unwrap();
    let s = |p: PathBuf| p.display().to_string();
    let mut rules = vec![
        rule(&s(ws.clone()), RWX, "sandbox.paths.workspace (rw)"),
        rule(&s(dir.join("docs")), Access::READ, "sandbox.extra_read"),
        rule(
            &s(dir.join("tty")),
            Access::DEVICE,
            "sandbox.system_read (devices)",
        ),
    ];
    rules.sort();
    Profile {
        rules,
        protected: vec![protected(
            &s(ws.join(".git/hooks")),
            "sandbox.protected (in sandbox.paths.workspace)",
        )],
        network: Network::Deny,
        limits: Limits::default(),
        forwards: Vec::new(),
    }
}

#[cfg(target_os = "linux")]
#[test]
fn landlock_golden() {
    let dir = tempfile::tempdir().unwrap();
    let profile = landlock_profile(dir.path());
    let prefix = dir.path().display().to_string();
    for (abi, network, file) in [
        (6, Network::Deny, "landlock_abi6.json"),
        (2, Network::Allow, "landlock_abi2_network_allow.json"),
        (7, Network::Proxy, "landlock_abi7_network_proxy.json"),
    ] {
        let mut p = profile.clone();
        p.network = network;
        let v = landlock::render(&p, abi, &[]);
        assert_eq!(v, landlock::render(&p, abi, &[]), "deterministic");
        let text = crate::render::json_text(&v);
        golden(file, &text.replace(&prefix, "$TMP"));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn landlock_shape() {
    let dir = tempfile::tempdir().unwrap();
    let v = landlock::render(&landlock_profile(dir.path()), 6, &[]);
    assert_eq!(v["enforcement"], "full");
    assert_eq!(
        v["handled_access_net"],
        serde_json::json!(["bind_tcp", "connect_tcp"])
    );
    assert_eq!(
        v["scoped"],
        serde_json::json!(["abstract_unix_socket", "signal"])
    );
    let rules = v["rules"].as_array().unwrap();
    let by_type = |t: &str| rules.iter().find(|r| r["type"] == t).unwrap();
    // A file gets file rights only; a missing path is a directory.
    assert_eq!(
        by_type("file")["access"],
        serde_json::json!(["write_file", "read_file", "truncate", "ioctl_dev"])
    );
    assert_eq!(
        by_type("missing")["access"],
        serde_json::json!(["read_file", "read_dir"])
    );
    let ws = &by_type("dir")["access"];
    assert!(ws.as_array().unwrap().contains(&"make_reg".into()));
    assert!(!ws.as_array().unwrap().contains(&"make_char".into()));
    // `.git` bound onto itself (not renamed away), the missing `.git/hooks` covered by a
    // read-only placeholder (none is made by rendering).
    let mounts = v["protected_mounts"].as_array().unwrap();
    assert_eq!(mounts.len(), 2, "{mounts:?}");
    assert!(mounts[0]["path"].as_str().unwrap().ends_with("ws/.git"));
    assert!(mounts[1]["path"]
        .as_str()
        .unwrap()
        .ends_with("ws/.git/hooks"));
    assert_eq!(
        mounts[1]["mount"], "read-only bind onto itself",
        "{mounts:?}"
    );
    assert!(!dir.path().join("ws/.git/hooks").exists());

    let v = landlock::render(&landlock_profile(dir.path()), 3, &[]);
    assert_eq!(v["enforcement"], "partial");
    assert!(v["gaps"].as_array().unwrap().len() >= 2);
    assert_eq!(v["handled_access_net"], serde_json::json!([]));
}

#[cfg(target_os = "linux")]
#[test]
fn landlock_for_the_default_policy() {
    let dir = tempfile::tempdir().unwrap();
    let profile = default_policy_profile(dir.path());
    let abi = crate::landlock::kernel_abi();
    let v = landlock::render(&profile, abi, &[]);
    // Every rule `prepare` adds, and the one init adds to the command's own devpts (the
    // host's /dev/pts is never one of `prepare`'s).
    let added = crate::landlock::host_rules(&profile).unwrap();
    assert_eq!(v["rules"].as_array().unwrap().len(), added.len() + 1);
    assert_eq!(added.len(), profile.rules.len() - 1);
    assert!(added
        .iter()
        .all(|r| r.path != std::path::Path::new("/dev/pts")));
    let pts: Vec<_> = v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["path"] == "/dev/pts")
        .collect();
    assert!(
        pts.len() == 1
            && pts[0]["origin"]
                .as_str()
                .unwrap()
                .contains("command's own devpts"),
        "{pts:?}"
    );
    assert!(v["rules"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["type"] != "missing"));
}

/// `[network.forward]`: the forwarded ports are what Landlock lets the command connect to
/// besides the proxy's, and the effective view names them.
#[cfg(target_os = "linux")]
#[test]
fn forwarded_ports_in_the_renders() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = landlock_profile(dir.path());
    p.network = Network::Proxy;
    p.forwards = vec![5432, 6379];
    let v = landlock::render(&p, 7, &[]);
    let ports: Vec<u64> = v["net_rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [u64::from(crate::PROXY_PORT), 5432, 6379]);
    let text = crate::render::effective::render(&p);
    assert!(
        text.contains("forwarded loopback ports 5432, 6379"),
        "{text}"
    );
}
