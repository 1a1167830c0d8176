//! The serving certificate: loaded from PEM files, swapped in place when the files change (cert-manager
//! renews a Secret; the kubelet updates the mounted files), so renewals need no restart.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::SystemTime;

use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;

/// The certificate and key files, and what they held when last loaded.
#[derive(Debug)]
pub(crate) struct CertStore {
    cert: PathBuf,
    key: PathBuf,
    current: RwLock<(Arc<CertifiedKey>, Stamp)>,
}

type Stamp = (Option<SystemTime>, Option<SystemTime>, u64, u64);

fn stamp(cert: &Path, key: &Path) -> Stamp {
    let c = std::fs::metadata(cert).ok();
    let k = std::fs::metadata(key).ok();
    (
        c.as_ref().and_then(|m| m.modified().ok()),
        k.as_ref().and_then(|m| m.modified().ok()),
        c.map_or(0, |m| m.len()),
        k.map_or(0, |m| m.len()),
    )
}

/// Load a PEM certificate chain and private key.
///
/// # Errors
///
/// A message naming the file that could not be read or parsed.
pub(crate) fn load(cert: &Path, key: &Path) -> Result<Arc<CertifiedKey>, String> {
    let cert_pem = std::fs::read(cert).map_err(|e| format!("{}: {e}", cert.display()))?;
    let key_pem = std::fs::read(key).map_err(|e| format!("{}: {e}", key.display()))?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("{}: {e}", cert.display()))?;
    if chain.is_empty() {
        return Err(format!("{}: no PEM certificate in it", cert.display()));
    }
    let der =
        PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| format!("{}: {e}", key.display()))?;
    let signer = rustls::crypto::ring::sign::any_supported_type(&der)
        .map_err(|e| format!("{}: {e}", key.display()))?;
    let certified = CertifiedKey::new(chain, signer);
    // A pair read while a renewal is half written (the certificate new, the key still the old one) loads
    // without error but fails every handshake; refuse it, so the old pair serves until the key arrives.
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(e) => {
            return Err(format!(
                "{} does not belong to {}: {e}",
                key.display(),
                cert.display()
            ));
        }
    }
    Ok(Arc::new(certified))
}

impl CertStore {
    /// Load the files now.
    ///
    /// # Errors
    ///
    /// As [`load`].
    pub(crate) fn open(cert: PathBuf, key: PathBuf) -> Result<Self, String> {
        let s = stamp(&cert, &key);
        let loaded = load(&cert, &key)?;
        Ok(CertStore {
            cert,
            key,
            current: RwLock::new((loaded, s)),
        })
    }

    /// When the files changed since the last load, load them again: `Some(Ok)` reloaded, `Some(Err)` the
    /// new files do not load (the old certificate stays in use), `None` unchanged.
    pub(crate) fn reload_if_changed(&self) -> Option<Result<(), String>> {
        let now = stamp(&self.cert, &self.key);
        if self.current.read().expect("cert lock").1 == now {
            return None;
        }
        match load(&self.cert, &self.key) {
            Ok(loaded) => {
                *self.current.write().expect("cert lock") = (loaded, now);
                Some(Ok(()))
            }
            Err(e) => {
                // Remember the stamp so a half-written pair is retried only when it changes again.
                self.current.write().expect("cert lock").1 = now;
                Some(Err(e))
            }
        }
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.read().expect("cert lock").0.clone())
    }
}

/// A rustls server configuration (ring, TLS 1.2 and 1.3, HTTP/1.1) that takes its certificate from `store`.
///
/// # Errors
///
/// When the crypto provider rejects the protocol versions (it does not).
pub(crate) fn server_config(store: Arc<CertStore>) -> Result<Arc<rustls::ServerConfig>, String> {
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_no_client_auth()
    .with_cert_resolver(store);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (String, String) {
        let ck = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("rcgen");
        (ck.cert.pem(), ck.signing_key.serialize_pem())
    }

    /// A renewal written as two files is seen half done when a poll falls between them: that pair must
    /// not replace the one in use (it would fail every handshake until the next poll).
    #[test]
    fn a_half_written_renewal_keeps_the_old_pair() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        let (old_cert, old_key) = pair();
        let (new_cert, new_key) = pair();
        std::fs::write(&cert, &old_cert).unwrap();
        std::fs::write(&key, &old_key).unwrap();
        let store = CertStore::open(cert.clone(), key.clone()).unwrap();
        let in_use = || store.current.read().unwrap().0.cert[0].to_vec();
        let old_der = in_use();
        // The certificate first; a larger file, so the stamp changes even within the mtime's resolution.
        std::fs::write(&cert, format!("{new_cert}\n")).unwrap();
        let half = store.reload_if_changed();
        assert!(
            matches!(&half, Some(Err(e)) if e.contains("does not belong")),
            "{half:?}"
        );
        assert_eq!(in_use(), old_der, "a mismatched pair replaced the old one");
        std::fs::write(&key, format!("{new_key}\n")).unwrap();
        assert_eq!(store.reload_if_changed(), Some(Ok(())));
        assert_ne!(in_use(), old_der);
        assert!(load(&cert, &key).is_ok());
    }
}
