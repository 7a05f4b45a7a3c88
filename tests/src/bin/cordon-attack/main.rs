//! The `cordon-attack` binary. Its attacks (`../cordon-attack.rs`) are Linux system calls;
//! on other systems it only says so, so that the workspace builds there.

// Every unsafe block here is a raw system call made to break out of the sandbox on
// purpose, with arguments the attack chose: its invariant is the attack's own (stated in
// each attack's docs), not one of cordon's, so the workspace's SAFETY-comment lint is off.
#![allow(clippy::undocumented_unsafe_blocks)]

#[cfg(target_os = "linux")]
#[path = "../cordon-attack.rs"]
mod attacks;

fn main() {
    #[cfg(target_os = "linux")]
    attacks::main();
    #[cfg(not(target_os = "linux"))]
    {
        println!("ERROR: cordon-attack: the escape suite's attacks are Linux system calls");
        std::process::exit(2);
    }
}
