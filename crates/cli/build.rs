//! Link flags for the `cordon` binary.
//!
//! Every tool call starts a `cordon` process, so its start-up is on the hot path
//! (docs/benchmarks.md). A position-independent executable carries one relocation per pointer
//! in its data (~16,000 here); `-z pack-relative-relocs` (DT_RELR: GNU ld ≥ 2.38 or lld, read
//! by glibc ≥ 2.36) stores the relative ones as a bitmap the loader walks, instead of 24 bytes
//! each it reads and applies. The executable stays position-independent (ASLR unchanged).
//! Only on linux-gnu, and only when the linker accepts the option (checked here: an older
//! toolchain builds as before).

use std::env;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let target_env = env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && target_env == "gnu" && linker_packs_relative_relocs() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether `cc` (the linker driver rustc uses on linux-gnu) links a program with the option:
/// GNU ld before 2.38 only warns about an unknown `-z` option (and exits 0, even with
/// `--fatal-warnings`), so anything on stderr counts as "no".
fn linker_packs_relative_relocs() -> bool {
    let Some(out) = env::var_os("OUT_DIR") else {
        return false;
    };
    let dir = std::path::PathBuf::from(out);
    let src = dir.join("relr-probe.c");
    if std::fs::write(&src, "int main(void) { return 0; }\n").is_err() {
        return false;
    }
    let cc = env::var_os("CC").unwrap_or_else(|| "cc".into());
    std::process::Command::new(cc)
        .arg("-pie")
        .arg("-fPIE")
        .arg("-Wl,-z,pack-relative-relocs")
        .arg("-o")
        .arg(dir.join("relr-probe"))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success() && o.stderr.is_empty())
}
