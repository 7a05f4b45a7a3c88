//! The Seatbelt backend at run time: the exact `sandbox-exec` command for a profile and a
//! command, built by plain functions that compile and are tested on every platform.
//!
//! [`invocation`] turns a [`Profile`] and a [`Spec`] into the [`Spec`] that really runs:
//!
//! ```text
//! /usr/bin/sandbox-exec -p PROFILE -DRW_0=/Users/a/proj -DRO_0=… -- PROG ARGS…
//! ```
//!
//! - `PROFILE` is the text of [`render::seatbelt::render`], the same generator `cordon
//!   profile --format seatbelt` prints, rendered after [`resolve_paths`] has resolved every
//!   path of the profile as Seatbelt will see it.
//! - Every path from the policy or the machine is a `-DNAME=VALUE` argument, never part of
//!   the profile text; a path with `"`, `\`, NUL, a newline or another control character is
//!   refused ([`Error::UnsafePath`]: exit 125).
//! - `--` ends `sandbox-exec`'s options, so `PROG` and its arguments are passed through
//!   untouched, whatever they look like.
//! - The environment is the spec's (already scrubbed, with the private `TMPDIR`); the working
//!   directory and timeout are the spec's.
//! - `sandbox-exec` is always `/usr/bin/sandbox-exec`, never looked up on `PATH`.
//!
//! Before anything starts, the program is looked up the way `sandbox-exec` will look it up
//! (`execvp(3)` on the spec's `PATH`), so that a missing program is 127 and one that is not
//! executable, or lies outside every directory the profile lets programs run from, is 126.
//! Once `sandbox-exec` runs, its status is the command's (it execs the command in place);
//! if it fails itself afterwards (this macOS rejects the profile, or refuses the exec in a
//! way the check above did not predict), it prints a `sandbox-exec:` line and its own
//! status is reported.
//!
//! Starting and supervising the process is the job of `run::macos`, compiled only for
//! macOS: type-checked there (`scripts/check-macos.sh`), never run by cordon's tests.

// The runner that calls these is macOS-only; on Linux they are built and tested, not used.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

use crate::profile::canonical;
use crate::profile::Profile;
use crate::render;
use crate::run::Spec;
use crate::Error;

/// The one `sandbox-exec` cordon runs: part of macOS, owned by root. Never one from `PATH`.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile with every path resolved by [`canonical`]: Seatbelt compares rules with the
/// real path of a file, so a rule on a path through a symlink (`/tmp`, `/var/folders`, a
/// workspace under a symlinked directory) would never match. Rules are sorted again.
pub fn resolve_paths(
    profile: &Profile,
    realpath: &dyn Fn(&Path) -> io::Result<PathBuf>,
) -> Profile {
    let mut out = profile.clone();
    for r in &mut out.rules {
        r.path = canonical(&r.path, realpath);
    }
    for p in &mut out.protected {
        p.path = canonical(&p.path, realpath);
    }
    out.rules.sort();
    out.rules.dedup();
    out.protected.sort();
    out.protected.dedup();
    out
}

/// Finds `program` as `execvp(3)` does: a name with a `/` relative to `cwd`, any other name
/// in each directory of `PATH` from `env` (an empty entry is `cwd`; no `PATH`:
/// [`crate::env::DEFAULT_PATH`]). A file found but not executable is remembered and
/// reported only if nothing executable comes later, like `execvp`'s EACCES.
pub fn find_program(
    program: &OsStr,
    env: &[(OsString, OsString)],
    cwd: &Path,
) -> Result<PathBuf, Error> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::PermissionsExt;
    let name = program.to_string_lossy().into_owned();
    if program.is_empty() {
        return Err(Error::NotFound(name));
    }
    let candidates: Vec<PathBuf> = if program.as_bytes().contains(&b'/') {
        vec![cwd.join(program)]
    } else {
        let path = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| crate::env::DEFAULT_PATH.into());
        std::env::split_paths(&path)
            .map(|dir| {
                if dir.as_os_str().is_empty() {
                    cwd.join(program)
                } else {
                    cwd.join(dir).join(program)
                }
            })
            .collect()
    };
    let mut not_executable = None;
    for c in candidates {
        match std::fs::metadata(&c) {
            Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => return Ok(c),
            Ok(_) => {
                not_executable.get_or_insert(c);
            }
            Err(_) => {}
        }
    }
    match not_executable {
        Some(c) => Err(Error::NotExecutable(
            name,
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is not an executable file", c.display()),
            ),
        )),
        None => Err(Error::NotFound(name)),
    }
}

/// The command that runs `spec` under `profile`: `sandbox_exec -p TEXT -DNAME=VALUE… --
/// PROG ARGS…` with the spec's environment, working directory and timeout (see the module
/// docs). `realpath` resolves paths on this machine ([`std::fs::canonicalize`] at run time).
pub fn invocation(
    profile: &Profile,
    spec: &Spec,
    sandbox_exec: &Path,
    realpath: &dyn Fn(&Path) -> io::Result<PathBuf>,
) -> Result<Spec, Error> {
    let profile = resolve_paths(profile, realpath);
    let sb = render::seatbelt::render(&profile)?;

    let found = find_program(&spec.program, &spec.env, &spec.cwd)?;
    let real = render::seatbelt::compared_path(&canonical(&found, realpath));
    if !render::seatbelt::executable_roots(&profile)
        .iter()
        .any(|root| real.starts_with(root))
    {
        return Err(Error::NotExecutable(
            spec.program.to_string_lossy().into_owned(),
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is outside every directory the Seatbelt profile lets programs run from",
                    real.display()
                ),
            ),
        ));
    }

    let mut args: Vec<OsString> = sb.args().into_iter().map(OsString::from).collect();
    args.push("--".into());
    args.push(spec.program.clone());
    args.extend(spec.args.iter().cloned());
    Ok(Spec {
        program: sandbox_exec.as_os_str().to_os_string(),
        args,
        cwd: spec.cwd.clone(),
        env: spec.env.clone(),
        timeout: spec.timeout,
        stdio: spec.stdio.clone(),
        cancel: spec.cancel.clone(),
        // The listener is made and handed over before sandbox-exec starts (outside it).
        proxy: None,
        release: None,
    })
}

/// A failure to start `sandbox-exec` itself is cordon's own failure (125), never "command
/// not found" (127) or "cannot execute" (126): the command was checked before, by
/// [`invocation`].
pub fn launcher_failed(e: Error) -> Error {
    match e {
        Error::NotFound(_) => Error::Setup(
            "starting /usr/bin/sandbox-exec",
            io::Error::from(io::ErrorKind::NotFound),
        ),
        Error::NotExecutable(_, err) => Error::Setup("starting /usr/bin/sandbox-exec", err),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{Access, PathRule, Protected};
    use cordon_policy::{Limits, Network};
    use std::os::unix::fs::PermissionsExt;
    use std::time::Duration;

    const RWX: Access = Access {
        write: true,
        exec: true,
        device: false,
    };

    fn rule(path: &Path, access: Access, origin: &str) -> PathRule {
        PathRule {
            path: path.to_path_buf(),
            access,
            origin: origin.into(),
        }
    }

    /// A workspace with an executable `tool` in it, the private TMPDIR, and `.git/hooks`
    /// protected (not created: protected paths need not exist).
    struct Fixture {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        tmp: PathBuf,
        profile: Profile,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let ws = base.join("ws");
        let tmp = base.join("tmp");
        std::fs::create_dir(&ws).unwrap();
        std::fs::create_dir(&tmp).unwrap();
        let tool = ws.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(ws.join("notes.txt"), "x").unwrap();
        let mut rules = vec![
            rule(&ws, RWX, "sandbox.paths.ws (rw)"),
            rule(
                &tmp,
                Access { exec: false, ..RWX },
                "private TMPDIR (created for this run)",
            ),
        ];
        rules.sort();
        let profile = Profile {
            rules,
            protected: vec![Protected {
                path: ws.join(".git/hooks"),
                origin: "sandbox.protected (in sandbox.paths.ws)".into(),
            }],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        Fixture {
            _dir: dir,
            ws,
            tmp,
            profile,
        }
    }

    fn spec(f: &Fixture, program: &str, args: &[&str]) -> Spec {
        Spec {
            program: program.into(),
            args: args.iter().map(OsString::from).collect(),
            cwd: f.ws.clone(),
            env: vec![
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("TMPDIR".into(), f.tmp.clone().into_os_string()),
            ],
            timeout: Some(Duration::from_secs(7)),
            stdio: Default::default(),
            cancel: None,
            release: None,
            proxy: None,
        }
    }

    fn canonicalize(p: &Path) -> io::Result<PathBuf> {
        std::fs::canonicalize(p)
    }

    fn strings(args: &[OsString]) -> Vec<String> {
        args.iter()
            .map(|a| a.to_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn the_exact_command() {
        let f = fixture();
        let s = spec(&f, "./tool", &["--flag", "two words"]);
        let inv = invocation(&f.profile, &s, Path::new(SANDBOX_EXEC), &canonicalize).unwrap();
        let sb = render::seatbelt::render(&f.profile).unwrap();
        assert_eq!(inv.program, OsString::from("/usr/bin/sandbox-exec"));
        let args = strings(&inv.args);
        let ws = render::seatbelt::compared_path(&f.ws);
        let tmp = render::seatbelt::compared_path(&f.tmp);
        let mut expected = vec!["-p".to_string(), sb.text.clone()];
        // Parameters in the order the profile uses them: roots (sorted by path), then
        // protected paths, then the directories down to them.
        let mut roots = [(ws.clone(), "RW_0"), (tmp.clone(), "RW_1")];
        roots.sort();
        for (i, (path, _)) in roots.iter().enumerate() {
            expected.push(format!("-DRW_{i}={}", path.display()));
        }
        expected.push(format!("-DPROTECTED_0={}/.git/hooks", ws.display()));
        expected.push(format!("-DPROTECTED_PARENT_0={}", ws.display()));
        expected.push(format!("-DPROTECTED_PARENT_1={}/.git", ws.display()));
        expected.extend(["--", "./tool", "--flag", "two words"].map(String::from));
        assert_eq!(args, expected);
        // Nothing else changes: environment, directory, timeout.
        assert_eq!(inv.env, s.env);
        assert_eq!(inv.cwd, s.cwd);
        assert_eq!(inv.timeout, Some(Duration::from_secs(7)));
        // The profile text holds no path from the machine.
        assert!(!sb.text.contains(f.ws.to_str().unwrap()));
    }

    #[test]
    fn the_command_and_its_arguments_are_never_options_or_profile_text() {
        let f = fixture();
        let evil = [
            "-p",
            "(version 1)(allow default)",
            "-DRW_0=/",
            "\"); (allow default) (\"",
            "a\nb",
            "--",
        ];
        let s = spec(&f, "./tool", &evil);
        let inv = invocation(&f.profile, &s, Path::new(SANDBOX_EXEC), &canonicalize).unwrap();
        let sep = inv.args.iter().position(|a| a == "--").unwrap();
        assert_eq!(inv.args[sep + 1], "./tool");
        assert_eq!(strings(&inv.args[sep + 2..]), evil.map(String::from));
        // Before the separator: -p TEXT and -D arguments only.
        assert_eq!(inv.args[0], "-p");
        for a in &inv.args[2..sep] {
            assert!(a.to_str().unwrap().starts_with("-D"), "{a:?}");
        }
        let text = inv.args[1].to_str().unwrap();
        for e in evil {
            assert!(
                !text.contains(e) || e == "--" || e == "-p",
                "{e:?} reached the profile"
            );
        }
    }

    #[test]
    fn paths_that_cannot_be_passed_are_refused_not_spliced() {
        for bad in ["quo\"te", "back\\slash", "new\nline", "nul\0byte", "tab\tx"] {
            let f = fixture();
            let mut p = f.profile.clone();
            p.rules
                .push(rule(&f.ws.join(bad), Access::READ, "sandbox.extra_read"));
            // A path that does not exist is resolved through its parent: still refused.
            let e = invocation(
                &p,
                &spec(&f, "./tool", &[]),
                Path::new(SANDBOX_EXEC),
                &canonicalize,
            )
            .unwrap_err();
            let Error::UnsafePath { origin, .. } = &e else {
                panic!("{bad:?}: {e:?}");
            };
            assert_eq!(origin, "sandbox.extra_read");
            assert!(!e.to_string().contains('\n'), "{e}");

            let mut p = f.profile.clone();
            p.protected[0].path = f.ws.join(bad);
            assert!(
                invocation(
                    &p,
                    &spec(&f, "./tool", &[]),
                    Path::new(SANDBOX_EXEC),
                    &canonicalize
                )
                .is_err(),
                "protected {bad:?}"
            );
        }
    }

    #[test]
    fn a_symlink_that_resolves_to_an_unsafe_path_is_refused_too() {
        let f = fixture();
        let target = f.ws.join("real\"dir");
        std::fs::create_dir(&target).unwrap();
        let link = f.ws.join("innocent");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut p = f.profile.clone();
        p.rules
            .push(rule(&link, Access::READ, "sandbox.extra_read"));
        let e = invocation(
            &p,
            &spec(&f, "./tool", &[]),
            Path::new(SANDBOX_EXEC),
            &canonicalize,
        )
        .unwrap_err();
        assert!(e.to_string().contains("double quote"), "{e}");
    }

    #[test]
    fn exit_codes_for_programs_that_cannot_run() {
        let f = fixture();
        let run = |prog: &str, env: Option<Vec<(OsString, OsString)>>| {
            let mut s = spec(&f, prog, &[]);
            if let Some(env) = env {
                s.env = env;
            }
            invocation(&f.profile, &s, Path::new(SANDBOX_EXEC), &canonicalize)
        };
        assert!(matches!(run("./missing", None), Err(Error::NotFound(n)) if n == "./missing"));
        assert!(matches!(
            run("no-such-cordon-program", None),
            Err(Error::NotFound(_))
        ));
        assert!(matches!(run("", None), Err(Error::NotFound(_))));
        // Not executable (mode 644), or a directory.
        assert!(matches!(
            run("./notes.txt", None),
            Err(Error::NotExecutable(..))
        ));
        assert!(matches!(run(".", None), Err(Error::NotExecutable(..))));
        // Found on PATH, but outside every directory the profile lets programs run from:
        // this profile has no system rules, so /usr/bin is not one of them.
        let e = run("sh", None).unwrap_err();
        assert!(
            matches!(&e, Error::NotExecutable(n, err) if n == "sh" && err.to_string().contains("outside every directory")),
            "{e:?}"
        );
        // PATH from the spec's environment: the workspace is executable.
        let env = vec![("PATH".into(), f.ws.clone().into_os_string())];
        assert!(run("tool", Some(env)).is_ok());
        // An empty PATH entry is the working directory, as for execvp.
        let env = vec![("PATH".into(), "/nonexistent:".into())];
        assert!(run("tool", Some(env)).is_ok());
    }

    #[test]
    fn system_programs_run_from_the_macos_program_list() {
        let f = fixture();
        let mut p = f.profile.clone();
        p.rules.push(rule(
            Path::new("/usr"),
            Access::READ_EXEC,
            "sandbox.system_read (programs)",
        ));
        let sh = find_program(OsStr::new("sh"), &spec(&f, "sh", &[]).env, &f.ws).unwrap();
        assert!(
            invocation(
                &p,
                &spec(&f, "sh", &[]),
                Path::new(SANDBOX_EXEC),
                &canonicalize
            )
            .is_ok(),
            "{}",
            sh.display()
        );
    }

    #[test]
    fn paths_are_resolved_as_macos_resolves_them() {
        // A fake macOS: /var and /tmp are symlinks into /private, the workspace sits behind a
        // symlinked directory, and protected paths do not exist yet.
        let fake = |p: &Path| -> io::Result<PathBuf> {
            let s = p.to_str().unwrap();
            let real = match s {
                "/" | "/Users" | "/Users/a" | "/Volumes" | "/Volumes/ext" | "/Volumes/ext/proj" => {
                    s.to_string()
                }
                "/Users/a/proj" => "/Volumes/ext/proj".into(),
                "/var"
                | "/var/folders"
                | "/var/folders/x"
                | "/var/folders/x/T"
                | "/var/folders/x/T/cordon-1" => format!("/private{s}"),
                "/tmp" => "/private/tmp".into(),
                _ => return Err(io::ErrorKind::NotFound.into()),
            };
            Ok(PathBuf::from(real))
        };
        assert_eq!(
            canonical(Path::new("/Users/a/proj"), &fake),
            Path::new("/Volumes/ext/proj")
        );
        assert_eq!(
            canonical(Path::new("/Users/a/proj/.git/hooks"), &fake),
            Path::new("/Volumes/ext/proj/.git/hooks")
        );
        assert_eq!(
            canonical(Path::new("/var/folders/x/T/cordon-1"), &fake),
            Path::new("/private/var/folders/x/T/cordon-1")
        );
        assert_eq!(
            canonical(Path::new("/tmp/new/file"), &fake),
            Path::new("/private/tmp/new/file")
        );
        // Nothing exists and no ancestor resolves: unchanged.
        assert_eq!(
            canonical(Path::new("relative/x"), &fake),
            Path::new("relative/x")
        );

        let profile = Profile {
            rules: vec![
                rule(Path::new("/Users/a/proj"), RWX, "sandbox.paths.w (rw)"),
                rule(
                    Path::new("/var/folders/x/T/cordon-1"),
                    Access { exec: false, ..RWX },
                    "private TMPDIR (created for this run)",
                ),
            ],
            protected: vec![Protected {
                path: PathBuf::from("/Users/a/proj/.git/hooks"),
                origin: "sandbox.protected (in sandbox.paths.w)".into(),
            }],
            network: Network::Deny,
            limits: Limits::default(),
            forwards: Vec::new(),
        };
        let resolved = resolve_paths(&profile, &fake);
        let sb = render::seatbelt::render(&resolved).unwrap();
        let params: Vec<(&str, &str)> = sb
            .params
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            params,
            vec![
                ("RW_0", "/Volumes/ext/proj"),
                ("RW_1", "/private/var/folders/x/T/cordon-1"),
                ("PROTECTED_0", "/Volumes/ext/proj/.git/hooks"),
                ("PROTECTED_PARENT_0", "/Volumes/ext/proj"),
                ("PROTECTED_PARENT_1", "/Volumes/ext/proj/.git"),
            ]
        );
    }

    #[test]
    fn real_symlinks_are_resolved_on_this_machine() {
        let f = fixture();
        let link = f.ws.parent().unwrap().join("link");
        std::os::unix::fs::symlink(&f.ws, &link).unwrap();
        assert_eq!(canonical(&link, &canonicalize), f.ws);
        assert_eq!(
            canonical(&link.join("a/b"), &canonicalize),
            f.ws.join("a/b")
        );
    }

    #[test]
    fn failing_to_start_sandbox_exec_is_cordons_own_failure() {
        let e = launcher_failed(Error::NotFound("/usr/bin/sandbox-exec".into()));
        assert!(matches!(e, Error::Setup(..)), "{e:?}");
        let e = launcher_failed(Error::NotExecutable(
            "/usr/bin/sandbox-exec".into(),
            io::ErrorKind::PermissionDenied.into(),
        ));
        assert!(matches!(e, Error::Setup(..)), "{e:?}");
    }
}
