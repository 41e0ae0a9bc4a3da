//! The VNC password file format: the password, zero-padded to 8 bytes,
//! DES-encrypted with a fixed key. Classic VNC viewers (TigerVNC's
//! `-passwd FILE`) read this, so the Windows opener can hand over the key
//! without putting it on a command line.

use des::cipher::{Array, BlockCipherEncrypt, KeyInit};
use des::Des;

/// The fixed key of VNC's password obfuscation, as the VNC code writes it.
const VNC_KEY: [u8; 8] = [23, 82, 107, 6, 35, 78, 88, 7];

/// VNC's DES takes key bytes with their bits in reverse order.
fn reversed_key() -> [u8; 8] {
    VNC_KEY.map(u8::reverse_bits)
}

/// The 8 bytes a VNC password file holds for `password` (only its first 8
/// bytes count, as in classic VNC authentication).
pub fn obfuscate(password: &str) -> [u8; 8] {
    let mut block = [0u8; 8];
    for (slot, byte) in block.iter_mut().zip(password.bytes()) {
        *slot = byte;
    }
    let cipher = Des::new(&Array::from(reversed_key()));
    let mut out = Array::from(block);
    cipher.encrypt_block(&mut out);
    out.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_tigervnc_vncpasswd() {
        // `printf 'ab3d5fgh' | vncpasswd -f | od -An -tx1`
        assert_eq!(
            obfuscate("ab3d5fgh"),
            [0xf6, 0x6b, 0xf4, 0x77, 0xc5, 0xd7, 0xda, 0x3d]
        );
    }

    #[test]
    fn only_the_first_eight_bytes_count() {
        assert_eq!(obfuscate("ab3d5fghIGNORED"), obfuscate("ab3d5fgh"));
    }
}
