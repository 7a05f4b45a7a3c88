//! Whether the operator's terminal is taken to read UTF-8: what decides how the bytes 0x80-0x9F
//! are treated in what cordon and the command print (`termout`, `cordon_gate::clean`).

use std::sync::OnceLock;

/// Whether cordon's locale says UTF-8 ([`utf8_locale`] over the environment, read once).
pub fn locale_is_utf8() -> bool {
    static UTF8: OnceLock<bool> = OnceLock::new();
    *UTF8.get_or_init(|| utf8_locale(|k| std::env::var_os(k)))
}

/// Whether the locale cordon runs in (`LC_ALL`, else `LC_CTYPE`, else `LANG`, as the C
/// library picks) says UTF-8. Otherwise (C, POSIX, none, Latin-1) the terminal is taken to be
/// one that may obey 8-bit C1 controls, as xterm does outside UTF-8 mode: the worse reading.
pub(crate) fn utf8_locale(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| var(k).filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_string_lossy().to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}
