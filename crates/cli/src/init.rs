//! `cordon init [--force]`: a commented starter `cordon.toml` for the project in the current
//! directory, trusted as written.
//!
//! The file names every key of the policy with a one-line comment, so that the operator reads
//! what each layer will do before anything runs under it. It is checked before it is trusted:
//! it must load and its rules' `match`/`not_match` examples must pass (a template that does
//! not is cordon's bug, refused with 125). Trust goes through the same code as `cordon policy
//! trust`, so what `init` prints is what that command prints.
//!
//! Where the `.git` directory stays read-only: the file lies in the writable workspace, so a
//! run under it must keep the policy itself read-only there, which needs a backend that can
//! keep a path inside a writable root read-only (bwrap or Landlock with a mount namespace of its
//! own on Linux, Seatbelt on macOS; Landlock without one refuses). A git repository's configuration surface is protected by the
//! same backend (`sandbox.git = "protect"`), so that costs nothing more. `init` asks the
//! backend chooser on this machine and says which backend will run the policy, or why none can.

use std::path::{Path, PathBuf};

use crate::{term, Error, Exit};

/// The starter policy; `{GIT}` becomes the `sandbox.git` lines for this project.
const TEMPLATE: &str = r#"# cordon policy for this project, written by `cordon init`. Every key is listed with what it
# does; `cordon check shell -c 'LINE'` shows the decision on a command without running it, and
# `cordon policy test` runs the rules' examples. After editing, trust the file again:
# `cordon policy trust` (cordon refuses a ./cordon.toml that changed since it was trusted).
version = 1                     # the policy format; always 1

[sandbox]
backend = "auto"                # auto | landlock | bwrap | seatbelt | none; auto picks what this policy needs
require_os_sandbox = true       # refuse to run (exit 125) rather than run without the kernel sandbox
network = "deny"                # deny | allow: with deny, commands cannot open network sockets
system_read = true              # the OS directories programs need (/usr, /bin, /lib*, some /etc), read-only
extra_read = []                 # more read-only paths, e.g. ["~/.cargo/registry"] (each must exist)
env = []                        # environment variables passed to commands besides the built-in allow-list
# Paths kept read-only inside the writable roots (relative ones apply in each root). Like
# this file, they need bwrap, Landlock with a mount namespace of its own (its init keeps them
# read-only with mounts), or Seatbelt; elsewhere Landlock refuses such a policy.
protected = []
{GIT}
[sandbox.paths.workspace]       # one table per named root; file tools and the kernel see the same roots
root = "."                      # relative to this file's directory: the project
mode = "rw"                     # ro | rw
exec = true                     # programs inside may be executed (builds, scripts)
suffixes = []                   # when set, the file tools touch only these suffixes, e.g. [".md"]
read_approval = false           # ask before a file tool reads here
write_approval = false          # ask before a file tool writes here

[sandbox.limits]                # for the command's whole process tree; leave a key out for no limit
timeout = "30m"                 # killed after this long (exit 124)
open_files = 4096               # RLIMIT_NOFILE
processes = 4096                # RLIMIT_NPROC (not applied to root)
file_size = "16G"               # the largest file a command may write
# memory = "8G"                 # RLIMIT_AS (not enforceable on macOS)
# cpu_time = "1h"               # RLIMIT_CPU

[shell]
default = "ask"                 # decision when no rule matches: allow | ask | deny

# Rules: `pattern` is a command's leading words (globs inside words); an explicit deny wins
# over everything, otherwise the last matching rule. `match` / `not_match` are examples checked
# whenever the policy loads. A rule allows what a program does with its read-only options:
# `git log --output=FILE` or `find -delete` still ask.
[[shell.rules]]
pattern = "git status"          # a command's leading words; globs inside words (`git clean -*f*`)
action = "allow"                # allow | ask | deny
[[shell.rules]]
pattern = "git diff"
action = "allow"
[[shell.rules]]
pattern = "git log"
action = "allow"
[[shell.rules]]
pattern = "git show"
action = "allow"
[[shell.rules]]
pattern = "git blame"
action = "allow"
[[shell.rules]]
pattern = "git ls-files"
action = "allow"
[[shell.rules]]
pattern = "git rev-parse"
action = "allow"
[[shell.rules]]
pattern = "ls"
action = "allow"
[[shell.rules]]
pattern = "cat"
action = "allow"
[[shell.rules]]
pattern = "head"
action = "allow"
[[shell.rules]]
pattern = "tail"
action = "allow"
[[shell.rules]]
pattern = "wc"
action = "allow"
[[shell.rules]]
pattern = "grep"
action = "allow"
[[shell.rules]]
pattern = "rg"
action = "allow"
[[shell.rules]]
pattern = "find"
action = "allow"
[[shell.rules]]
pattern = "pwd"
action = "allow"
[[shell.rules]]
pattern = "git push"
action = "ask"
reason = "publishes work"       # shown to the person asked, and to the agent when denied
[[shell.rules]]
pattern = "git push --force*"
action = "deny"
reason = "rewrites remote history"
match = ["git push --force origin main", "git push --force-with-lease"]  # must match
not_match = ["git push origin main"]    # must not match
[[shell.rules]]
pattern = "git push -f"
action = "deny"
reason = "rewrites remote history"
match = ["git push -f origin main"]
[[shell.rules]]
pattern = "git reset --hard"
action = "deny"
reason = "destroys uncommitted work"
match = ["git reset --hard HEAD~1"]
not_match = ["git reset --soft HEAD~1"]
[[shell.rules]]
pattern = "git clean -*f*"
action = "deny"
reason = "deletes untracked files for good"
match = ["git clean -fdx"]
not_match = ["git clean -n"]
[[shell.rules]]
pattern = "rm -rf /"
action = "deny"
reason = "deletes the whole filesystem"
match = ["rm -rf /"]
[[shell.rules]]
pattern = "rm -[rRf]*[rRf] /*"
action = "deny"
reason = "recursive delete of a top-level directory"
match = ["rm -rf /usr", "rm -fr /home"]
not_match = ["rm -rf build"]
[[shell.rules]]
pattern = "mkfs*"
action = "deny"
reason = "formats a filesystem"
match = ["mkfs.ext4 /dev/sda1"]
[[shell.rules]]
pattern = "sudo"
action = "deny"
reason = "no privilege escalation from the agent"
match = ["sudo apt-get install x"]

# Tools of your own (an agent's `send_email`, say): the approval they need.
# [tools.send_email]
# approval = "ask"              # allow | ask | deny

[approval]
mode = "interactive"            # interactive | approve-all | strict | deny (without a terminal, asks are denied)
timeout = "5m"                  # an unanswered question is denied
doom_loop = 3                   # the same call this many times in a row asks, even where a rule allows it
# Every decision is appended here (hash-chained; `cordon audit verify`, `cordon audit show`).
# Inside the workspace, its directory is hidden from commands; add .cordon/ to .gitignore.
audit_log = ".cordon/audit.jsonl"
"#;

/// `sandbox.git` for a git repository: its configuration surface read-only.
const GIT_PROTECT: &str = r#"# This is a git repository: keep .git/config, .git/hooks and the rest of what git reads as
# configuration or code (commondir, info/, modules/, worktrees/, alternates) read-only, so a
# command cannot plant code that your next `git status` runs. protected = [".git/hooks",
# ".git/config"] alone would leave .git/commondir, which points git at another config. Git
# work (add, commit, branch, rebase) stays writable. Needs what this file needs (above).
git = "protect"                 # protect | writable
"#;

/// `sandbox.git` for a directory that is not a repository (yet): `git init` must work.
const GIT_WRITABLE: &str = r#"# No .git here when this file was written: `git = "protect"` would keep one from being
# created. Once this is a repository, set it to keep .git's configuration and hooks read-only.
git = "writable"                # protect | writable
"#;

/// A linked work tree's `.git` is a file naming the repository, which lies elsewhere.
const GIT_LINKED: &str = r#"# .git here is a file naming a repository elsewhere (a linked work tree): that repository
# is outside this project's roots, so git run under this policy cannot reach it until you add
# it as a root. The .git file itself stays read-only, so a command cannot re-point it.
"#;

/// Whether `dir` is a git repository's work tree: `.git` is a directory, or a gitdir file (a
/// linked work tree); never followed if it is a link.
fn is_git_repository(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(".git")).is_ok_and(|m| m.is_dir() || m.is_file())
}

/// The policy text for a project in `dir`.
fn policy_text(dir: &Path) -> String {
    let linked = std::fs::symlink_metadata(dir.join(".git")).is_ok_and(|m| m.is_file());
    let git = match (is_git_repository(dir), linked) {
        (true, true) => format!("{GIT_LINKED}{GIT_PROTECT}"),
        (true, false) => GIT_PROTECT.to_string(),
        (false, _) => GIT_WRITABLE.to_string(),
    };
    TEMPLATE.replace("{GIT}", &git)
}

/// `cordon init [--force]`.
pub fn run(force: bool) -> Exit {
    let cwd = crate::current_dir()?;
    let path = cwd.join(cordon_policy::DEFAULT_POLICY_FILE);
    let shown = term::clean(&path.display().to_string());
    let backup = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::failure(format!("cannot inspect {shown}: {e}"))),
        Ok(_) if !force => {
            return Err(Error::failure(format!(
                "{shown} already exists; `cordon init --force` replaces it and keeps it as a backup"
            )))
        }
        Ok(m) if m.is_dir() => {
            return Err(Error::failure(format!(
                "{shown} is a directory; move it away first"
            )))
        }
        Ok(_) => match move_aside(&cwd, Path::new(cordon_policy::DEFAULT_POLICY_FILE)) {
            Ok(to) => Some(to),
            Err(e) => return Err(Error::failure(format!("cannot back up {shown}: {e}"))),
        },
    };
    let text = policy_text(&cwd);
    // Whole or not at all: a cordon killed in the middle left an empty `cordon.toml`, which the
    // next `cordon init` refused and `cordon policy trust` pinned.
    let written = cordon_fs::safe::Dir::anchor(&cwd).and_then(|d| {
        d.create_whole(
            Path::new(cordon_policy::DEFAULT_POLICY_FILE),
            text.as_bytes(),
            0o644,
        )
    });
    if let Err(e) = written {
        return Err(Error::failure(format!("cannot write {shown}: {e}")));
    }
    // The written file must load and its examples pass before anyone trusts it.
    let policy = match cordon_policy::Policy::load(&path) {
        Ok(p) => p,
        Err(e) => {
            return Err(crate::policy_error(
                "the written policy does not load: ",
                &e,
                None,
            ))
        }
    };
    let failed: Vec<_> = cordon_gate::example_results(&policy)
        .into_iter()
        .filter(|r| !r.ok)
        .collect();
    if let Some(r) = failed.first() {
        return Err(Error::failure(format!(
            "the written policy fails its own example: {}",
            r.message()
        )));
    }
    if let Some(to) = &backup {
        println!(
            "moved the earlier {} to {}",
            cordon_policy::DEFAULT_POLICY_FILE,
            term::clean(&to.display().to_string())
        );
    }
    println!(
        "wrote {shown}: the project read-write, no network, shell default `ask`, {} rules ({})",
        policy.shell.rules.len(),
        if is_git_repository(&cwd) {
            "a git repository: .git configuration and hooks read-only"
        } else {
            "not a git repository"
        }
    );
    let code = crate::policy_trust(Some(path.clone()), true)?;
    if code != 0 {
        return Ok(code);
    }
    println!("cordon exec, check and profile in this directory now use it");
    // Which backend runs it here, prepared as `cordon exec` prepares it.
    match cordon_ossandbox::prepare(
        &policy,
        &cordon_ossandbox::Machine::probe(),
        policy.sandbox.backend,
    ) {
        Ok(prepared) => println!(
            "on this machine it runs on {}",
            backend_name(prepared.backend())
        ),
        Err(why) => eprintln!(
            "cordon: warning: this machine cannot run it yet: {}",
            term::clean(&why.to_string())
        ),
    }
    Ok(0)
}

fn backend_name(chosen: &cordon_ossandbox::Chosen) -> &'static str {
    use cordon_ossandbox::Chosen;
    match chosen {
        Chosen::Landlock { .. } => "landlock",
        Chosen::Bwrap { .. } => "bwrap",
        Chosen::Seatbelt { .. } => "seatbelt",
        Chosen::Unconfined => "no sandbox",
    }
}

/// Renames `name` in `dir` to `NAME.bak` (or `NAME.bak.N`, the first name not taken), through
/// [`cordon_fs::safe`] and never over an existing name: nothing is overwritten or deleted.
fn move_aside(dir: &Path, name: &Path) -> Result<PathBuf, cordon_fs::safe::SafeError> {
    let d = cordon_fs::safe::Dir::anchor(dir)?;
    let mut base = name.as_os_str().to_owned();
    base.push(".bak");
    for n in 0..10_000 {
        let mut to = base.clone();
        if n > 0 {
            to.push(format!(".{n}"));
        }
        match d.rename_noreplace(name, Path::new(&to)) {
            Ok(()) => return Ok(dir.join(to)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(cordon_fs::safe::SafeError::Io {
        path: dir.join(name),
        source: std::io::Error::other("every backup name is taken"),
    })
}
