//! Where a query's next page starts, as a value a web app can hand to its clients.
//!
//! Without a [`CursorKey`] a cursor is URL-safe base64 JSON: the index and the `LastEvaluatedKey`,
//! readable and editable by whoever holds it, and checked only against the index and partition
//! of the query it resumes. With a key set on the [`Db`](crate::Db), a cursor is sealed with
//! XChaCha20-Poly1305 (the `chacha20poly1305` crate): its contents are encrypted, and
//! authenticated together with the query's fingerprint (table, index, key condition, filter,
//! projection, direction, entities read), the sealing key's id and an optional expiry. Each
//! cursor has a random 192-bit nonce. A client sees only opaque bytes: not the keys of the last
//! item evaluated, which may be one the filter hid.
//!
//! A sealed cursor names the key that sealed it by an id derived from the secret, so that a
//! [`CursorKey`] can hold the secrets being rotated out beside the newest: cursors are sealed
//! with the newest and opened with any.

pub use crate::error::cursor::CursorError;
use crate::item::Item;
use crate::wire;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hkdf::Hkdf;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The first byte of a cursor sealed by this release, which no unsigned cursor (JSON, so `{`)
/// starts with.
const SEALED_VERSION: u8 = 2;
/// The first byte of a cursor sealed by singletable 0.1 (HMAC-SHA256 and ChaCha20, one secret
/// and no key id), refused with a clear error.
const FIRST_SEALED_VERSION: u8 = 1;
/// Bytes of a key's id.
const KEY_ID: usize = 8;
/// Bytes of an XChaCha20 nonce.
const NONCE: usize = 24;
/// Version, key id, expiry (milliseconds since the epoch, 0 for none) and nonce.
const HEADER: usize = 1 + KEY_ID + 8 + NONCE;
/// The shortest secret accepted: 256 bits.
const MIN_SECRET: usize = 32;
/// The most secrets a key holds: the newest and those being rotated out.
const MAX_SECRETS: usize = 8;

/// The secrets that seal a [`Db`](crate::Db)'s cursors (see
/// [`Db::with_cursor_key`](crate::Db::with_cursor_key)): the newest seals, and every one
/// opens.
///
/// Every process serving one application must hold the same secrets. To rotate a secret
/// without breaking the cursors clients hold: deploy the new secret as the newest with the
/// old one as [`with_previous`](CursorKey::with_previous); once the cursors sealed with the
/// old one have expired or been used, deploy the new one alone.
///
/// ```
/// use singletable_runtime::op::query::CursorKey;
/// use std::time::Duration;
///
/// let (new_secret, old_secret) = ([7u8; 32], [9u8; 32]);
/// let key = CursorKey::new(&new_secret)?
///     .with_previous(&old_secret)?
///     .expire_after(Duration::from_secs(15 * 60));
/// # Ok::<(), singletable_runtime::op::query::CursorError>(())
/// ```
#[derive(Clone)]
pub struct CursorKey {
    /// The newest secret's key, which seals.
    sealing: SecretKey,
    /// Older secrets' keys, which only open.
    previous: Vec<SecretKey>,
    lifetime: Option<Duration>,
}

/// The key and its id, derived from one secret.
#[derive(Clone)]
struct SecretKey {
    id: [u8; KEY_ID],
    cipher: XChaCha20Poly1305,
}

impl SecretKey {
    fn derive(secret: &[u8]) -> Result<SecretKey, CursorError> {
        if secret.len() < MIN_SECRET {
            return Err(CursorError::new(format!(
                "a cursor secret needs at least {MIN_SECRET} bytes, got {}",
                secret.len()
            )));
        }
        // HKDF-SHA256: the secret may be any high-entropy bytes, the key and its id are
        // independent of each other, and the id tells nothing of the key.
        let kdf = Hkdf::<Sha256>::new(None, secret);
        let mut key = [0u8; 32];
        let mut id = [0u8; KEY_ID];
        kdf.expand(b"singletable cursor key v2", &mut key)
            .and_then(|()| kdf.expand(b"singletable cursor key id v2", &mut id))
            .map_err(|_| CursorError::new("a cursor key could not be derived"))?;
        Ok(SecretKey {
            id,
            cipher: XChaCha20Poly1305::new(&key.into()),
        })
    }
}

impl CursorKey {
    /// A key from a secret of at least 32 bytes (for example 32 random bytes kept in a secrets
    /// manager): it seals the cursors and opens them.
    pub fn new(secret: &[u8]) -> Result<CursorKey, CursorError> {
        Ok(CursorKey {
            sealing: SecretKey::derive(secret)?,
            previous: Vec::new(),
            lifetime: None,
        })
    }

    /// Also opens the cursors sealed with `secret`, an earlier secret being rotated out; it
    /// seals none. A key holds at most 8 secrets.
    pub fn with_previous(mut self, secret: &[u8]) -> Result<CursorKey, CursorError> {
        if self.previous.len() + 1 >= MAX_SECRETS {
            return Err(CursorError::new(format!(
                "a cursor key holds at most {MAX_SECRETS} secrets"
            )));
        }
        self.previous.push(SecretKey::derive(secret)?);
        Ok(self)
    }

    /// Cursors sealed with this key are refused `lifetime` after they were made.
    pub fn expire_after(mut self, lifetime: Duration) -> CursorKey {
        self.lifetime = Some(lifetime);
        self
    }

    /// The key whose id is `id`, if this key holds it.
    fn secret(&self, id: &[u8; KEY_ID]) -> Option<&SecretKey> {
        std::iter::once(&self.sealing)
            .chain(&self.previous)
            .find(|secret| &secret.id == id)
    }
}

impl fmt::Debug for CursorKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CursorKey")
            .field("secrets", &(1 + self.previous.len()))
            .field("lifetime", &self.lifetime)
            .finish_non_exhaustive()
    }
}

/// What a sealed cursor authenticates besides its contents: its header and the query.
fn associated_data(header: &[u8], fingerprint: &Fingerprint) -> Vec<u8> {
    let mut data = Vec::with_capacity(header.len() + fingerprint.0.len());
    data.extend_from_slice(header);
    data.extend_from_slice(&fingerprint.0);
    data
}

/// A digest of everything that makes a query the query it is, apart from its page size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// The fingerprint of a request (its first page), with the entities it decodes.
    pub(crate) fn of(request: &wire::Request, entities: &[&str]) -> Fingerprint {
        let mut body = request.body.clone();
        if let Some(fields) = body.as_object_mut() {
            // A client may ask for another page size, and capacity reporting changes nothing.
            fields.remove("Limit");
            fields.remove("ReturnConsumedCapacity");
        }
        let mut digest = Sha256::new();
        digest.update(request.operation.as_bytes());
        digest.update([0]);
        digest.update(body.to_string().as_bytes());
        for entity in entities {
            digest.update([0]);
            digest.update(entity.as_bytes());
        }
        Fingerprint(digest.finalize().into())
    }
}

/// An opaque position in a query's results, for "next page" APIs: [`Cursor::encode`] gives a
/// URL-safe base64 string and [`Cursor::decode`] reads it back. A cursor is checked against
/// the query it resumes: one from another index, partition or table shape is an error, and with
/// a [`CursorKey`] on the `Db`, so is one from any other query, or one that was edited or has
/// expired.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    state: State,
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    /// A position in this process: from a page, or decoded from an unsigned cursor.
    Open {
        position: Position,
        /// The key and query of the page it came from, when its `Db` seals cursors.
        seal: Option<Seal>,
    },
    /// Decoded from a sealed cursor; only a `Db` with its key can open it.
    Sealed(Sealed),
}

/// The index and the `LastEvaluatedKey`, as a cursor holds them: `{"i": index or null, "k":
/// key in DynamoDB JSON}`; a merged query of a sharded partition holds each shard's position
/// instead (`"s": [..]`, and an empty `"k"`). Clients keep cursors, so this shape stays
/// readable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Position {
    #[serde(rename = "i")]
    pub(crate) index: Option<String>,
    #[serde(rename = "k", with = "wire::as_item")]
    pub(crate) key: Item,
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub(crate) shards: Option<Vec<ShardPosition>>,
}

/// Where one shard of a merged query goes on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum ShardPosition {
    /// Nothing of the shard has been read yet.
    Start,
    /// After this key (the shard's `ExclusiveStartKey`).
    After(#[serde(with = "wire::as_item")] Item),
    /// Every item of the shard has been read.
    Done,
}

impl Position {
    fn bytes(&self) -> Vec<u8> {
        // Cannot fail: text keys and JSON values only.
        serde_json::to_vec(self).unwrap_or_default()
    }

    fn read(bytes: &[u8]) -> Result<Position, CursorError> {
        serde_json::from_slice(bytes)
            .map_err(|error| CursorError::new(format!("not a cursor ({error})")))
    }
}

#[derive(Debug, Clone)]
struct Seal {
    key: Arc<CursorKey>,
    fingerprint: Fingerprint,
}

impl PartialEq for Seal {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.key, &other.key) && self.fingerprint == other.fingerprint
    }
}

impl Cursor {
    /// The cursor of a page, sealed with `key` when the page's `Db` has one.
    pub(crate) fn new(position: Position, seal: Option<(Arc<CursorKey>, Fingerprint)>) -> Cursor {
        Cursor {
            state: State::Open {
                position,
                seal: seal.map(|(key, fingerprint)| Seal { key, fingerprint }),
            },
        }
    }

    /// The cursor as an opaque string: sealed when it came from a page of a `Db` with a
    /// [`CursorKey`], otherwise unsigned base64 JSON.
    pub fn encode(&self) -> String {
        let bytes = match &self.state {
            State::Open {
                position,
                seal: None,
            } => position.bytes(),
            State::Open {
                position,
                seal: Some(seal),
            } => Sealed::seal(&seal.key, &seal.fingerprint, &position.bytes()).bytes,
            State::Sealed(sealed) => sealed.bytes.clone(),
        };
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// Reads a string made by [`Cursor::encode`]. A sealed cursor is opened, and checked, by
    /// the query it resumes.
    pub fn decode(text: &str) -> Result<Cursor, CursorError> {
        // URL-safe, as `encode` writes; standard base64 too, as cursors were first written.
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .or_else(|_| STANDARD.decode(text))
            .map_err(|_| CursorError::new("not base64"))?;
        let state = match bytes.first() {
            Some(&SEALED_VERSION) => State::Sealed(Sealed::read(bytes)?),
            Some(&FIRST_SEALED_VERSION) => {
                return Err(CursorError::new(
                    "it was sealed by singletable 0.1, whose sealed cursors this release does \
                     not open; start the listing again",
                ))
            }
            _ => State::Open {
                position: Position::read(&bytes)?,
                seal: None,
            },
        };
        Ok(Cursor { state })
    }

    /// The position this cursor resumes from, if it may resume the query with `fingerprint`
    /// on a `Db` with `key`.
    pub(crate) fn open(
        &self,
        key: Option<(&Arc<CursorKey>, Fingerprint)>,
    ) -> Result<Position, CursorError> {
        let invalid = CursorError::new;
        match (&self.state, key) {
            (State::Open { position, .. }, None) => Ok(position.clone()),
            (State::Open { seal: None, .. }, Some(_)) => Err(invalid(
                "this Db seals its cursors, and an unsigned cursor could have been edited",
            )),
            (
                State::Open {
                    position,
                    seal: Some(seal),
                },
                Some((key, fingerprint)),
            ) => {
                if Arc::ptr_eq(&seal.key, key) && seal.fingerprint == fingerprint {
                    Ok(position.clone())
                } else {
                    Err(invalid("it belongs to another query"))
                }
            }
            (State::Sealed(_), None) => Err(invalid(
                "it is sealed, and this Db has no cursor key (`Db::with_cursor_key`)",
            )),
            (State::Sealed(sealed), Some((key, fingerprint))) => {
                let plain = sealed.open(key, &fingerprint)?;
                Position::read(&plain)
            }
        }
    }
}

/// A sealed cursor's bytes: its header (version, key id, expiry, nonce), then its contents
/// encrypted and their tag.
#[derive(Debug, Clone, PartialEq)]
struct Sealed {
    bytes: Vec<u8>,
}

impl Sealed {
    /// `plain` sealed with `key`'s newest secret for the query with `fingerprint`.
    fn seal(key: &CursorKey, fingerprint: &Fingerprint, plain: &[u8]) -> Sealed {
        let expires = key
            .lifetime
            .map_or(0, |lifetime| millis(SystemTime::now() + lifetime));
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let mut bytes = Vec::with_capacity(HEADER + plain.len() + 16);
        bytes.push(SEALED_VERSION);
        bytes.extend_from_slice(&key.sealing.id);
        bytes.extend_from_slice(&expires.to_be_bytes());
        bytes.extend_from_slice(&nonce);
        let payload = Payload {
            msg: plain,
            aad: &associated_data(&bytes, fingerprint),
        };
        // Encryption fails only for contents of 256 GiB and more; a cursor without them
        // would fail to open, with an error, rather than leak its contents unsealed.
        let sealed = key
            .sealing
            .cipher
            .encrypt(&nonce, payload)
            .unwrap_or_default();
        bytes.extend_from_slice(&sealed);
        Sealed { bytes }
    }

    /// Checks the length of what [`Cursor::decode`] read.
    fn read(bytes: Vec<u8>) -> Result<Sealed, CursorError> {
        // The AEAD's tag is 16 bytes.
        if bytes.len() < HEADER + 16 {
            return Err(CursorError::new("a sealed cursor cut short"));
        }
        Ok(Sealed { bytes })
    }

    /// The contents, if `key` holds the secret that sealed them for the query with
    /// `fingerprint`, unedited and unexpired.
    fn open(&self, key: &CursorKey, fingerprint: &Fingerprint) -> Result<Vec<u8>, CursorError> {
        let invalid = CursorError::new;
        let field = |range: std::ops::Range<usize>| self.bytes.get(range).unwrap_or_default();
        let (Ok(id), Ok(expires), Ok(nonce)) = (
            <[u8; KEY_ID]>::try_from(field(1..1 + KEY_ID)),
            <[u8; 8]>::try_from(field(1 + KEY_ID..9 + KEY_ID)),
            <[u8; NONCE]>::try_from(field(9 + KEY_ID..HEADER)),
        ) else {
            return Err(invalid("a sealed cursor cut short"));
        };
        let (header, sealed) = (field(0..HEADER), field(HEADER..self.bytes.len()));
        let Some(secret) = key.secret(&id) else {
            return Err(invalid(
                "it was sealed with a secret this Db's cursor key does not hold (rotated out, \
                 or never its), or edited",
            ));
        };
        let payload = Payload {
            msg: sealed,
            aad: &associated_data(header, fingerprint),
        };
        let plain = secret
            .cipher
            .decrypt(&XNonce::from(nonce), payload)
            .map_err(|_| invalid("it was edited, or belongs to another query"))?;
        let expires = u64::from_be_bytes(expires);
        if expires != 0 && millis(SystemTime::now()) > expires {
            return Err(invalid("it has expired"));
        }
        Ok(plain)
    }
}

fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;

    /// Cursors as this library wrote them before `Position` was serde-derived, of
    /// [`position`]: clients hold such cursors, so they must keep decoding.
    const UNSEALED: &str = "eyJpIjoiR1NJMSIsImsiOnsiR1NJMVBLIjp7IlMiOiJDVVNUT01FUiNhbmEifSwiR1NJMVNLIjp7Ik4iOiI0MiJ9LCJQSyI6eyJTIjoiU0hPUCNub3J0aCJ9LCJTSyI6eyJTIjoiT1JERVIjMDAwMDA5In19fQ";
    /// Sealed by singletable 0.1 with [`SECRET`] for the fingerprint `[7; 32]`, without
    /// expiry: refused, with the reason.
    const SEALED_BY_0_1: &str = "AQAAAAAAAAAAuBoiTBOfugxRdpLiCNKWZkMafOlP_XQAIyY1tcDK3EBY73ngLQZ28U65PXx3hCYnHfAwvz55g29eX7ydioWs7f7hyjjWtoIBfWPJ8wVEG4t4kniulP_RAclR0Io9nHBpYOWY8txul5xVEB_e89q5b7indqSL9Sr3n6K7ENtsuIPCy461qWRONIT6gUgIR_kXWR8Wb74u";
    /// A position on the table itself (no index), `{"i": null, ..}`.
    const ON_THE_TABLE: &str = "eyJpIjpudWxsLCJrIjp7IlBLIjp7IlMiOiJBIn19fQ";
    const SECRET: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

    fn position() -> Position {
        Position {
            index: Some("GSI1".to_owned()),
            key: Item::from([
                ("PK".to_owned(), AttributeValue::S("SHOP#north".into())),
                ("SK".to_owned(), AttributeValue::S("ORDER#000009".into())),
                (
                    "GSI1PK".to_owned(),
                    AttributeValue::S("CUSTOMER#ana".into()),
                ),
                ("GSI1SK".to_owned(), AttributeValue::N("42".into())),
            ]),
            shards: None,
        }
    }

    #[test]
    fn cursors_of_earlier_releases_resume_or_are_refused_with_the_reason() -> Result<(), CursorError>
    {
        assert_eq!(Cursor::decode(UNSEALED)?.open(None)?, position());
        let refused = Cursor::decode(SEALED_BY_0_1).map(|_| ()).unwrap_err();
        assert!(refused.reason.contains("singletable 0.1"), "{refused}");
        let on_the_table = Cursor::decode(ON_THE_TABLE)?.open(None)?;
        assert_eq!(on_the_table.index, None);
        assert_eq!(
            on_the_table.key,
            Item::from([("PK".to_owned(), AttributeValue::S("A".into()))])
        );
        Ok(())
    }

    #[test]
    fn a_position_goes_round_a_cursor() -> Result<(), CursorError> {
        let cursor = Cursor::new(position(), None).encode();
        assert_eq!(Cursor::decode(&cursor)?.open(None)?, position());
        for bad in [
            r#"{"i": 3, "k": {}}"#,
            r#"{"i": null, "k": {"PK": 1}}"#,
            "[]",
        ] {
            let text = URL_SAFE_NO_PAD.encode(bad);
            assert!(
                Cursor::decode(&text).and_then(|c| c.open(None)).is_err(),
                "{bad}"
            );
        }
        Ok(())
    }

    fn sealed_with(key: &Arc<CursorKey>, fingerprint: [u8; 32]) -> Cursor {
        Cursor::new(position(), Some((key.clone(), Fingerprint(fingerprint))))
    }

    fn opened(
        text: &str,
        key: &Arc<CursorKey>,
        fingerprint: [u8; 32],
    ) -> Result<Position, CursorError> {
        Cursor::decode(text)?.open(Some((key, Fingerprint(fingerprint))))
    }

    #[test]
    fn a_sealed_cursor_opens_only_with_its_secret_and_query_and_unedited() -> Result<(), CursorError>
    {
        let key = Arc::new(CursorKey::new(SECRET)?);
        let text = sealed_with(&key, [7; 32]).encode();
        // Its contents are not in the clear.
        let bytes = URL_SAFE_NO_PAD.decode(&text).unwrap_or_default();
        assert!(!bytes.windows(4).any(|window| window == b"SHOP"));
        assert_eq!(opened(&text, &key, [7; 32])?, position());
        // Each sealing draws its own nonce.
        assert_ne!(sealed_with(&key, [7; 32]).encode(), text);
        assert!(opened(&text, &key, [8; 32]).is_err(), "another query");
        for at in [0, 1, 9, 17, HEADER, bytes.len() - 1] {
            let mut edited = bytes.clone();
            edited[at] ^= 1;
            let edited = URL_SAFE_NO_PAD.encode(edited);
            assert!(opened(&edited, &key, [7; 32]).is_err(), "byte {at} edited");
        }
        let cut = URL_SAFE_NO_PAD.encode(&bytes[..HEADER + 15]);
        assert!(Cursor::decode(&cut).is_err());
        Ok(())
    }

    #[test]
    fn a_rotated_secret_opens_until_it_is_removed() -> Result<(), CursorError> {
        const NEW: &[u8; 32] = b"fedcba9876543210fedcba9876543210";
        let old = Arc::new(CursorKey::new(SECRET)?);
        let rotating = Arc::new(CursorKey::new(NEW)?.with_previous(SECRET)?);
        let rotated = Arc::new(CursorKey::new(NEW)?);
        let before = sealed_with(&old, [7; 32]).encode();
        assert_eq!(opened(&before, &rotating, [7; 32])?, position());
        let during = sealed_with(&rotating, [7; 32]).encode();
        assert_eq!(
            opened(&during, &rotated, [7; 32])?,
            position(),
            "sealed with the newest"
        );
        assert!(opened(&during, &old, [7; 32]).is_err());
        let removed = opened(&before, &rotated, [7; 32]).unwrap_err();
        assert!(removed.reason.contains("does not hold"), "{removed}");
        let mut full = CursorKey::new(NEW)?;
        for n in 0..MAX_SECRETS - 1 {
            full = full.with_previous(&[u8::try_from(n).unwrap_or(0); 32])?;
        }
        assert!(
            full.with_previous(SECRET).is_err(),
            "at most {MAX_SECRETS} secrets"
        );
        Ok(())
    }
}
