//! The VNC password file format: the password, zero-padded to 8 bytes,
//! DES-encrypted with a fixed key. Classic VNC viewers (TigerVNC's
//! `-passwd FILE`) read this, so the Windows opener can hand over the key
//! without putting it on a command line. The same DES answers a VNC
//! server's authentication challenge, which `doctor` does.

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
    encrypt(reversed_key(), first_eight(password))
}

/// The answer to a VncAuth challenge: both halves encrypted with DES, keyed
/// by the password (its first 8 bytes, bits reversed as VNC does).
pub fn challenge_response(password: &str, challenge: &[u8; 16]) -> [u8; 16] {
    let key = first_eight(password).map(u8::reverse_bits);
    let mut out = [0u8; 16];
    for (half, answer) in challenge.chunks_exact(8).zip(out.chunks_exact_mut(8)) {
        let block = <[u8; 8]>::try_from(half).expect("8 bytes");
        answer.copy_from_slice(&encrypt(key, block));
    }
    out
}

/// A password's first 8 bytes, zero-padded: all classic VNC reads.
fn first_eight(password: &str) -> [u8; 8] {
    let mut block = [0u8; 8];
    for (slot, byte) in block.iter_mut().zip(password.bytes()) {
        *slot = byte;
    }
    block
}

/// One DES block.
fn encrypt(key: [u8; 8], block: [u8; 8]) -> [u8; 8] {
    let cipher = Des::new(&Array::from(key));
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

    #[test]
    fn a_challenge_answer_is_the_password_file_cipher_keyed_by_the_password() {
        // The password file is DES of the password under VNC's fixed key;
        // a challenge answer is DES of the challenge under the password.
        // With the fixed key as the password and the password as the
        // challenge, both are the same cipher.
        let fixed: String = VNC_KEY.iter().map(|b| char::from(*b)).collect();
        let mut challenge = [0u8; 16];
        challenge[..8].copy_from_slice(b"ab3d5fgh");
        challenge[8..].copy_from_slice(b"ab3d5fgh");
        let answer = challenge_response(&fixed, &challenge);
        assert_eq!(answer[..8], obfuscate("ab3d5fgh"));
        assert_eq!(answer[8..], obfuscate("ab3d5fgh"));
    }
}
