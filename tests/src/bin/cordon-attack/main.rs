//! The `cordon-attack` binary. Its attacks (`../cordon-attack.rs`) are Linux system calls;
//! on other systems it only says so, so that the workspace builds there.

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
