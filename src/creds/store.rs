//! Where `multicooker login` keeps a flavor's long-lived, non-rotating token: the OS keyring
//! (through the `keyring` crate) under multicooker's own entry, or, where no keyring is
//! available (a headless Linux box without a Secret Service), 0600 files in a private folder.

use std::path::PathBuf;

use super::CredsError;

/// The keyring service name of multicooker's entries.
const SERVICE: &str = "multicooker";

/// A place for long-lived tokens.
pub trait TokenStore {
    /// The token of `flavor`, if one was stored.
    fn get(&self, flavor: &str) -> Result<Option<String>, CredsError>;
    /// Stores the token of `flavor`.
    fn set(&self, flavor: &str, token: &str) -> Result<(), CredsError>;
    /// Removes the token of `flavor`; true when there was one.
    fn delete(&self, flavor: &str) -> Result<bool, CredsError>;
    /// What the store is, for messages.
    fn describe(&self) -> String;
}

/// The OS keyring.
#[derive(Debug, Default)]
pub struct KeyringStore;

impl KeyringStore {
    fn entry(flavor: &str) -> Result<keyring::Entry, CredsError> {
        keyring::Entry::new(SERVICE, &format!("{flavor}-token")).map_err(|e| CredsError::Store {
            store: "OS keyring".into(),
            message: e.to_string(),
        })
    }
}

impl TokenStore for KeyringStore {
    fn get(&self, flavor: &str) -> Result<Option<String>, CredsError> {
        match Self::entry(flavor)?.get_password() {
            Ok(token) => Ok(Some(token)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(CredsError::Store {
                store: self.describe(),
                message: e.to_string(),
            }),
        }
    }
    fn set(&self, flavor: &str, token: &str) -> Result<(), CredsError> {
        Self::entry(flavor)?
            .set_password(token)
            .map_err(|e| CredsError::Store {
                store: self.describe(),
                message: e.to_string(),
            })
    }
    fn delete(&self, flavor: &str) -> Result<bool, CredsError> {
        match Self::entry(flavor)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(CredsError::Store {
                store: self.describe(),
                message: e.to_string(),
            }),
        }
    }
    fn describe(&self) -> String {
        format!("OS keyring, service `{SERVICE}`")
    }
}

/// 0600 files in a 0700 folder.
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// A store in `dir`.
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }
}

impl TokenStore for FileStore {
    fn get(&self, flavor: &str) -> Result<Option<String>, CredsError> {
        match std::fs::read_to_string(self.dir.join(flavor)) {
            Ok(token) => Ok(Some(token.trim().to_owned()).filter(|t| !t.is_empty())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(CredsError::Store {
                store: self.describe(),
                message: e.to_string(),
            }),
        }
    }
    fn set(&self, flavor: &str, token: &str) -> Result<(), CredsError> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let fail = |e: std::io::Error| CredsError::Store {
            store: self.describe(),
            message: e.to_string(),
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(fail)?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(self.dir.join(flavor))
            .map_err(fail)?;
        file.write_all(token.as_bytes()).map_err(fail)
    }
    fn delete(&self, flavor: &str) -> Result<bool, CredsError> {
        match std::fs::remove_file(self.dir.join(flavor)) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(CredsError::Store {
                store: self.describe(),
                message: e.to_string(),
            }),
        }
    }
    fn describe(&self) -> String {
        format!("files in `{}`", self.dir.display())
    }
}

/// The store to use: `spec` (`MULTICOOKER_TOKEN_STORE`, read in settings: `file:<folder>` or
/// `keyring`), else the OS keyring when one is available, else files in
/// `<home>/.config/multicooker/tokens`.
pub fn token_store(spec: Option<&str>, home: &std::path::Path) -> Box<dyn TokenStore> {
    match spec {
        Some(spec) if spec.starts_with("file:") => {
            Box::new(FileStore::new(PathBuf::from(&spec[5..])))
        }
        Some("keyring") => Box::new(KeyringStore),
        _ if keyring::Entry::store_status().is_ok() && KeyringStore.get("probe").is_ok() => {
            Box::new(KeyringStore)
        }
        _ => Box::new(FileStore::new(home.join(".config/multicooker/tokens"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_store_keeps_tokens_private() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = FileStore::new(dir.path().join("tokens"));
        assert_eq!(store.get("claude").unwrap(), None);
        store.set("claude", "sk-ant-oat01-long").unwrap();
        assert_eq!(
            store.get("claude").unwrap().as_deref(),
            Some("sk-ant-oat01-long")
        );
        assert_eq!(
            std::fs::metadata(dir.path().join("tokens/claude"))
                .unwrap()
                .mode()
                & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::metadata(dir.path().join("tokens")).unwrap().mode() & 0o777,
            0o700
        );
        assert!(store.delete("claude").unwrap());
        assert!(!store.delete("claude").unwrap());
        assert_eq!(store.get("claude").unwrap(), None);
    }
}
