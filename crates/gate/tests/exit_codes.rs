//! The gate reports a sandbox error with the exit code the sandbox gives it
//! (`cordon_ossandbox::Error::exit_code`): these must be the gate's documented codes.

use cordon_gate::{EXIT_DENIED, EXIT_FAILURE, EXIT_NOT_FOUND};
use cordon_ossandbox::{Error, ErrorKind};

#[test]
fn sandbox_errors_exit_with_the_gates_codes() {
    let not_found = Error::NotFound("nope".into());
    assert_eq!(not_found.kind(), ErrorKind::NotFound);
    assert_eq!(not_found.exit_code(), EXIT_NOT_FOUND);
    let not_executable = Error::NotExecutable(
        "./x".into(),
        std::io::Error::from(std::io::ErrorKind::PermissionDenied),
    );
    assert_eq!(not_executable.exit_code(), EXIT_DENIED);
    for e in [
        Error::Refused("no backend".into()),
        Error::Setup(
            "seccomp",
            std::io::Error::from(std::io::ErrorKind::InvalidInput),
        ),
        Error::Io(std::io::Error::other("memfd")),
    ] {
        assert_eq!(e.exit_code(), EXIT_FAILURE, "{e}");
    }
}
