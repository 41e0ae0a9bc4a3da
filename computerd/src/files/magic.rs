//! Recognising the images `read_file` returns as images, by their first bytes
//! rather than their names: a `.png` may be anything, a PNG may be `x.bin`.

/// Bytes needed to recognise every kind below.
pub(super) const PREFIX_BYTES: usize = 8;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
const JPEG: &[u8] = b"\xFF\xD8\xFF";

/// An image kind `read_file` returns as image content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ImageKind {
    Png,
    Jpeg,
}

impl ImageKind {
    pub(super) fn detect(prefix: &[u8]) -> Option<ImageKind> {
        if prefix.starts_with(PNG) {
            Some(ImageKind::Png)
        } else if prefix.starts_with(JPEG) {
            Some(ImageKind::Jpeg)
        } else {
            None
        }
    }

    pub(super) fn mime(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            ImageKind::Png => "PNG",
            ImageKind::Jpeg => "JPEG",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_png_and_jpeg_by_magic() {
        assert_eq!(
            ImageKind::detect(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"),
            Some(ImageKind::Png)
        );
        assert_eq!(
            ImageKind::detect(b"\xFF\xD8\xFF\xE0\0\x10JFIF"),
            Some(ImageKind::Jpeg)
        );
        assert_eq!(ImageKind::detect(b"\xFF\xD8\xFF"), Some(ImageKind::Jpeg));
    }

    #[test]
    fn near_misses_are_not_images() {
        assert_eq!(ImageKind::detect(b""), None);
        assert_eq!(ImageKind::detect(b"\x89PNG\r\n"), None);
        assert_eq!(ImageKind::detect(b"PNG image"), None);
        assert_eq!(ImageKind::detect(b"\xFF\xD8"), None);
        assert_eq!(ImageKind::detect(b"GIF89a"), None);
    }
}
