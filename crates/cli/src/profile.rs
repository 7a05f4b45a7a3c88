//! `cordon profile`: what the kernel will enforce for a policy — by default the effective
//! access of each path, the network and the refused system calls, each with the policy key
//! behind it; with `--format`, the artifact each backend uses, deterministic and commented.

use cordon_ossandbox::Format;

use crate::{Error, Exit, ProfileArgs, ProfileFormat};

pub fn run(args: ProfileArgs) -> Exit {
    let (cwd, policy) = crate::load_policy(args.policy.as_deref())?;
    // The same refusals as `cordon exec`: no artifact for a sandbox that hands over the system
    // or is built through a planted link. Any machine may show any backend's artifact.
    let prepared = cordon_ossandbox::describe(&policy).map_err(Error::failure)?;
    let format = match args.format {
        None => Format::Effective,
        Some(ProfileFormat::Seatbelt) => Format::Seatbelt,
        Some(ProfileFormat::Bwrap) => Format::Bwrap { cwd },
        Some(ProfileFormat::Landlock) => Format::Landlock { abi: args.abi },
        Some(ProfileFormat::Seccomp) => Format::Seccomp { arch: args.arch },
    };
    let text = prepared.render(&format).map_err(Error::failure)?;
    print!("{text}");
    if !text.ends_with('\n') {
        println!();
    }
    Ok(0)
}
