//! Previews of file operations for approval: diffs, (truncated) content, binary lines.

use std::sync::Arc;

use similar::{ChangeTag, TextDiff};

use crate::tool::{Presentation, Preview, PREVIEW_BYTES};

/// Whether bytes are binary: a NUL byte or invalid UTF-8.
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes.contains(&0) || std::str::from_utf8(bytes).is_err()
}

/// What binary bytes look like, from their first bytes.
pub fn binary_kind(bytes: &[u8]) -> &'static str {
    const MAGIC: &[(&[u8], &str)] = &[
        (b"\x89PNG\r\n\x1a\n", "PNG image"),
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF87a", "GIF image"),
        (b"GIF89a", "GIF image"),
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "ZIP archive"),
        (b"\x1f\x8b", "gzip data"),
        (b"BZh", "bzip2 data"),
        (b"\xfd7zXZ\x00", "xz data"),
        (b"(\xb5/\xfd", "zstd data"),
        (b"7z\xbc\xaf\x27\x1c", "7-zip archive"),
        (b"\x7fELF", "ELF executable"),
        (b"\x00asm", "WebAssembly module"),
        (b"SQLite format 3\x00", "SQLite database"),
        (b"RIFF", "RIFF data (WAV/AVI/WebP)"),
    ];
    MAGIC
        .iter()
        .find(|(m, _)| bytes.starts_with(m))
        .map_or("binary data", |(_, k)| k)
}

/// The preview of a whole file's content: the text (truncated past [`PREVIEW_BYTES`], the
/// whole kept in `full`) or a size-and-type line for binary data.
pub fn content(summary: String, bytes: &[u8]) -> Presentation {
    if is_binary(bytes) {
        return Presentation {
            summary,
            preview: Preview::Binary {
                size: bytes.len() as u64,
                kind: binary_kind(bytes).into(),
            },
            full: None,
        };
    }
    let text = std::str::from_utf8(bytes).unwrap_or_default();
    let mut cut = text.len().min(PREVIEW_BYTES);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let truncated = (text.len() - cut) as u64;
    Presentation {
        summary,
        preview: Preview::Content {
            text: text[..cut].to_string(),
            truncated_bytes: truncated,
        },
        full: (truncated > 0).then(|| Arc::from(text)),
    }
}

/// A unified diff between two texts, with `a/KEY` and `b/KEY` headers, and the number of
/// lines added and removed.
pub fn diff(key: &str, old: &str, new: &str) -> (String, usize, usize) {
    let d = TextDiff::from_lines(old, new);
    let (mut added, mut removed) = (0, 0);
    for c in d.iter_all_changes() {
        match c.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let unified = d
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{key}"), &format!("b/{key}"))
        .to_string();
    (unified, added, removed)
}

/// The preview of replacing `old` bytes by `new` bytes: a diff when both are text, else a
/// binary line for the new content.
pub fn change(verb: &str, key: &str, old: &[u8], new: &[u8]) -> Presentation {
    match (std::str::from_utf8(old), std::str::from_utf8(new)) {
        (Ok(o), Ok(n)) if !is_binary(old) && !is_binary(new) => {
            let (unified, added, removed) = diff(key, o, n);
            Presentation {
                summary: format!("{verb} {key} (+{added} -{removed} lines)"),
                preview: Preview::Diff { unified },
                full: None,
            }
        }
        _ => content(
            format!(
                "{verb} {key} ({} bytes replaced by {} bytes)",
                old.len(),
                new.len()
            ),
            new,
        ),
    }
}
