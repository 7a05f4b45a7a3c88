//! Links the unwinder that Rust's standard library references (`_Unwind_*`, for backtraces;
//! cordon itself never unwinds: `panic = "abort"`) from GCC's static `libgcc_eh.a` into the
//! `cordon` binary, instead of loading `libgcc_s.so.1` at every start. An agent host starts
//! `cordon hook` before every tool call: the shared library costs its mapping, its
//! relocations and its constructor, whose `cpuid` instructions each exit to the hypervisor on
//! a virtual machine (docs/benchmarks.md, start23). libgcc is under the GCC Runtime Library
//! Exception, which covers static linking as it covers the shared library.
//!
//! Only for glibc Linux targets, where the C toolchain ships `libgcc_eh.a` beside `libgcc_s`;
//! this crate's own native libraries come before the standard library's `-lgcc_s` on the link
//! line, so the archive answers the references first and `--as-needed` drops `libgcc_s`.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let var = |k| std::env::var(k).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-lib=static=gcc_eh");
    }
}
