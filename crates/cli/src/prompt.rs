//! Asking a person on the controlling terminal. No terminal, a closed terminal, a read error
//! or the approval timeout all answer "no".

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use cordon_tools::assess::ShellAssessment;

/// Is there a person to ask? stdin must be a terminal and /dev/tty must open.
pub fn terminal_available() -> bool {
    let stdin_is_tty = unsafe { libc::isatty(0) == 1 };
    stdin_is_tty
        && OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok()
}

/// Shows the request and waits for `y` (approve) or anything else (deny), at most `timeout`.
pub fn ask(shown: &str, a: &ShellAssessment, timeout: Duration) -> Result<bool, String> {
    let mut tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("approval needed, but the terminal cannot be opened: {e}"))?;
    let mut text = format!(
        "\ncordon: approval needed to run `{shown}`\n  why: {}\n",
        a.decision.reason
    );
    for c in &a.commands {
        text.push_str(&format!(
            "  {:<5} {}\n",
            c.decision.action.as_str(),
            c.command.words.join(" ")
        ));
    }
    text.push_str(&format!("Allow? [y/N] (denied in {}s) ", timeout.as_secs()));
    tty.write_all(text.as_bytes())
        .map_err(|e| format!("approval channel failed: {e}"))?;

    let deadline = Instant::now() + timeout;
    let mut answer = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = tty.write_all(b"\n");
            return Err(format!(
                "no answer within {}s; an unanswered request is denied",
                timeout.as_secs()
            ));
        }
        let mut pfd = libc::pollfd {
            fd: tty.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if n < 0 {
            return Err(format!(
                "approval channel failed: {}",
                std::io::Error::last_os_error()
            ));
        }
        if n == 0 {
            continue;
        }
        let mut byte = [0u8; 1];
        match tty.read(&mut byte) {
            Ok(0) => return Err("the terminal closed before an answer; denied".into()),
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => answer.push(byte[0]),
            Err(e) => return Err(format!("approval channel failed: {e}")),
        }
    }
    let answer = String::from_utf8_lossy(&answer).trim().to_ascii_lowercase();
    Ok(answer == "y" || answer == "yes")
}
