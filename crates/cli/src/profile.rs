//! `cordon profile`: what the kernel will enforce for a policy, as the artifact each backend
//! uses, deterministic and commented with the policy key behind every rule.

use std::path::Path;

use cordon_ossandbox::render;
#[cfg(target_os = "linux")]
use cordon_ossandbox::render::oci;
use cordon_ossandbox::Profile;
#[cfg(target_os = "linux")]
use cordon_ossandbox::{landlock, seccomp};

use crate::{Error, Exit, ProfileArgs, ProfileFormat};

pub fn run(args: ProfileArgs) -> Exit {
    let (cwd, policy) = crate::load_policy(args.policy.as_deref())?;
    // The private /tmp is made per run; the artifacts show where it stands.
    let profile = Profile::from_policy(&policy).with_private_tmp(Path::new(render::PRIVATE_TMP));
    // The same refusal as `cordon exec`: a profile built through a planted link is not shown.
    #[cfg(target_os = "linux")]
    if let Err(r) = cordon_ossandbox::resolve::check(&policy, &profile) {
        // One line, whatever a planted link's target holds.
        return Err(Error::failure(r));
    }
    // The same refusal a run would meet: no artifact for a sandbox that hands over the system.
    if let Err(r) = cordon_ossandbox::roots::check(&profile) {
        return Err(Error::failure(r));
    }
    match args.format {
        ProfileFormat::Seatbelt => seatbelt(&profile),
        _ => linux_artifact(args, &profile, &cwd),
    }
}

/// The SBPL text and its parameters. On macOS the paths are resolved as a run resolves them
/// (realpath); elsewhere they are this machine's, with the /private rewrite the renderer
/// does (see its docs).
fn seatbelt(profile: &Profile) -> Exit {
    #[cfg(target_os = "macos")]
    let profile =
        &cordon_ossandbox::seatbelt::resolve_paths(profile, &|p| std::fs::canonicalize(p));
    match render::seatbelt::render(profile) {
        Ok(sb) => print_text(&sb.audit()),
        Err(e) => Err(Error::failure(e)),
    }
}

/// The Linux artifacts come from this kernel's ABI and syscall tables: Linux builds only.
#[cfg(not(target_os = "linux"))]
fn linux_artifact(_: ProfileArgs, _: &Profile, _: &Path) -> Exit {
    Err(Error::failure(
        "--format bwrap, landlock and seccomp describe Linux kernels; render them with a Linux build of cordon",
    ))
}

#[cfg(target_os = "linux")]
fn linux_artifact(args: ProfileArgs, profile: &Profile, cwd: &Path) -> Exit {
    let abi = args.abi.unwrap_or_else(|| match landlock::kernel_abi() {
        0 => 7, // not running on Linux with Landlock: describe the newest ABI this build knows well
        n => n,
    });
    let text = match args.format {
        ProfileFormat::Seatbelt => return seatbelt(profile),
        ProfileFormat::Seccomp => {
            let arch = match args.arch.as_deref() {
                None => native_arch(),
                Some("x86_64") => oci::OciArch::X86_64,
                Some("aarch64") => oci::OciArch::Aarch64,
                Some(other) => {
                    return Err(Error::failure(format!(
                        "unknown --arch `{other}` (x86_64, aarch64)"
                    )))
                }
            };
            oci::to_string_pretty(&oci::render(&seccomp::rules(profile.network), arch))
        }
        ProfileFormat::Landlock => render::json_text(&render::landlock::render(profile, abi)),
        ProfileFormat::Bwrap => {
            let bwrap = cordon_ossandbox::Machine::probe()
                .bwrap
                .unwrap_or_else(|| "/usr/bin/bwrap".into());
            let root = rustix::process::geteuid().is_root();
            match render::bwrap::render(profile, cwd, &bwrap, root) {
                Ok(t) => t,
                Err(e) => return Err(Error::failure(e)),
            }
        }
    };
    print_text(&text)
}

fn print_text(text: &str) -> Exit {
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(0)
}

#[cfg(target_os = "linux")]
fn native_arch() -> oci::OciArch {
    if cfg!(target_arch = "aarch64") {
        oci::OciArch::Aarch64
    } else {
        oci::OciArch::X86_64
    }
}
