//! Builds the bubblewrap backend's inner stage (`inner/main.rs`) as a tiny freestanding,
//! statically linked program that the crate embeds (see `src/bwrap.rs`). It is compiled with
//! the same rustc for the same target, `no_std` without libc: it starts in a fraction of the
//! time of cordon's own binary, costs next to nothing to copy into its memfd on every run, and
//! needs nothing from the sandbox's view (not even a dynamic loader, which a policy with
//! `system_read = false` does not provide).

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=inner/main.rs");
    println!("cargo:rerun-if-changed=build.rs");
    if env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let out =
        PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("cordon-inner");
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let target = env::var("TARGET").expect("cargo sets TARGET");
    let mut cmd = Command::new(rustc);
    cmd.args([
        "--edition=2021",
        "--crate-type=bin",
        "--crate-name=cordon_inner",
        "-Copt-level=s",
        "-Cpanic=abort",
        "-Cdebuginfo=0",
        "-Cstrip=symbols",
        // No libc, no start files, no dynamic loader; not PIE, so nothing to relocate.
        "-Crelocation-model=static",
        "-Clink-arg=-nostartfiles",
        "-Clink-arg=-nostdlib",
        "-Clink-arg=-static",
        "--target",
        &target,
        "-o",
    ]);
    cmd.arg(&out).arg("inner/main.rs");
    if let Some(linker) = env::var_os("RUSTC_LINKER") {
        cmd.arg("-C").arg({
            let mut a = std::ffi::OsString::from("linker=");
            a.push(linker);
            a
        });
    }
    let status = cmd
        .status()
        .expect("cannot run rustc to build the inner stage");
    assert!(
        status.success(),
        "building the inner stage (inner/main.rs) failed"
    );
}
