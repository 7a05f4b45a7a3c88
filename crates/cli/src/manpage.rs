//! `cordon __man DIR`: the man pages, rendered from the clap command the binary parses with
//! (so they cannot drift from it): `cordon.1` with the sections clap does not know (exit
//! status, environment, files), and `cordon-SUBCOMMAND.1` for each visible subcommand.
//! `crates/cli/tests/manpage.rs` keeps the checked-in `docs/man/` equal to this output.

use std::path::Path;

/// What `cordon.1` says beyond the options: roff, written by hand.
const EXTRA: &str = r#".SH "EXIT STATUS"
Exit codes follow coreutils (\fBenv\fR(1), \fBtimeout\fR(1)):
.TP
the command's own status
when it ran and exited;
.TP
128+N
it died of signal N;
.TP
124
it ran past its timeout (the whole process tree is killed);
.TP
125
cordon's own failure: a bad or untrusted policy, a sandbox this machine cannot build, an audit log that cannot be written;
.TP
126
denied by the policy or by a person, or not executable;
.TP
127
not found.
.PP
Every refusal is one line on standard error that starts with \fBcordon:\fR.
.SH ENVIRONMENT
.TP
\fBCORDON_SESSION\fR
the session \fBexec \-\-session\fR defaults to.
.TP
\fBXDG_CONFIG_HOME\fR
the trust store is \fI$XDG_CONFIG_HOME/cordon/trusted/\fR (else \fI~/.config/cordon/trusted/\fR).
.TP
\fBXDG_STATE_HOME\fR
the default audit log is \fI$XDG_STATE_HOME/cordon/audit.jsonl\fR (else \fI~/.local/state/cordon/audit.jsonl\fR).
.TP
\fBXDG_RUNTIME_DIR\fR
named sessions' grants live in \fI$XDG_RUNTIME_DIR/cordon/sessions/\fR (else \fI~/.local/state/cordon/sessions/\fR).
.SH FILES
.TP
\fI./cordon.toml\fR
the policy, used only as the operator trusted it (\fBcordon policy trust\fR); without one, and without \fB\-\-policy\fR, the embedded default.
.TP
\fIcordon.rules.toml\fR
rules remembered by "approve always", beside the policy file.
.SH "SEE ALSO"
\fBbwrap\fR(1), \fBsandbox\-exec\fR(1), \fBlandlock\fR(7), \fBseccomp\fR(2); the reference in the project's \fIdocs/\fR.
"#;

/// Writes `cordon.1` and a page per visible subcommand (recursively) into `dir`, each through
/// [`cordon_fs::safe`]: the directory is often in a project a sandboxed command can write, and
/// a link it planted at a page's name is refused by name, never written through.
pub fn write_all(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    let out_dir = cordon_fs::safe::Dir::anchor(dir).map_err(safe_error)?;
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        // As `clap_mangen::generate_to` does: each subcommand built on its own, its own
        // subcommands first.
        let mut sub = sub.clone().disable_help_subcommand(true);
        sub.build();
        write_pages(sub, &out_dir)?;
    }
    let man = clap_mangen::Man::new(cmd);
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    man.render_subcommands_section(&mut out)?;
    out.extend_from_slice(EXTRA.as_bytes());
    man.render_version_section(&mut out)?;
    write_page(&out_dir, &man, &out)
}

/// The pages of `cmd`'s visible subcommands (recursively), then `cmd`'s own.
fn write_pages(cmd: clap::Command, dir: &cordon_fs::safe::Dir) -> std::io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
        write_pages(sub, dir)?;
    }
    let man = clap_mangen::Man::new(cmd);
    let mut out = Vec::new();
    man.render(&mut out)?;
    write_page(dir, &man, &out)
}

fn write_page(
    dir: &cordon_fs::safe::Dir,
    man: &clap_mangen::Man,
    page: &[u8],
) -> std::io::Result<()> {
    dir.write(Path::new(&man.get_filename()), page, 0o644)
        .map_err(safe_error)
}

/// A link-safe write's refusal (which names the link) as an I/O error.
fn safe_error(e: cordon_fs::safe::SafeError) -> std::io::Error {
    std::io::Error::new(e.kind(), e.to_string())
}
