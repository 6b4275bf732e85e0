//! Names of engine objects that every engine and DNS accepts, and the marker of the record a
//! cell's init prints when its program has ended: the two wire facts the backends share with the
//! cell engine (which re-exports them).

use sha2::Digest;

/// What starts the exit record (the same constant `mc-cell init` prints).
pub const EXIT_RECORD: &str = "\u{1e}[mc-cell] exit ";

/// The longest object name every engine and DNS accepts (a DNS label; Swarm's limit).
pub const MAX_OBJECT_NAME: usize = 63;

/// `name` if it is short enough, else its first 50 characters and a hash of the whole, so it
/// still starts like the original, stays unique and fits [`MAX_OBJECT_NAME`].
pub fn fit(name: &str) -> String {
    if name.len() <= MAX_OBJECT_NAME {
        return name.to_owned();
    }
    let digest = sha2::Sha256::digest(name.as_bytes());
    let short: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let head: String = name.chars().take(50).collect();
    format!("{}-{short}", head.trim_end_matches('-'))
}
