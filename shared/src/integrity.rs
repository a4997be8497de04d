//! Integrity: canonical JSON, sha256 content hashes, ed25519 signatures.
//!
//! # The canonical form (RFC 8785, JSON Canonicalization Scheme)
//!
//! A record is signed over its canonical bytes, so the signature does not
//! depend on key order or whitespace in the file on disk. The rule is RFC 8785:
//! - object members sorted by key, comparing keys as UTF-16 code units;
//! - no whitespace anywhere;
//! - strings escaped minimally: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`,
//!   other control characters below U+0020 as `\u00xx` (lowercase hex), every
//!   other character written as itself in UTF-8;
//! - numbers in the ECMAScript `Number.prototype.toString` form (shortest
//!   round-trip digits, exponent only below 1e-6 or from 1e21 on, `-0` as `0`).
//!
//! RFC 8785 reads every number as an IEEE double. An integer whose text is not
//! already the canonical text of its double (e.g. 2^53 + 1, which would become
//! 9007199254740992) is refused ([`IntegrityError::IntegerOutOfRange`]) rather
//! than silently changed, so our canonical bytes always equal what any
//! other RFC 8785 implementation produces for the same value. Parsing uses
//! serde_json's `float_roundtrip`, so a canonical file reads back to the very
//! doubles it was written from.
//!
//! # Signatures
//!
//! A signed record carries a `signature` member. The signed message is the
//! domain tag [`RECORD_SIGNATURE_DOMAIN`] followed by the canonical JSON of the
//! whole record with the `signature` member removed. The record names every
//! tape with its sha256 and size, so one signature covers the tapes too.
//! Verification works everywhere (wasm32 included); signing takes a secret
//! seed from the caller and is compiled only for native targets, so this crate
//! never needs an OS random source.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use ed25519_dalek::{Signature as DalekSignature, VerifyingKey};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// Prefix of every signed message, so a record signature can never be replayed
/// as a signature over some other kind of document.
pub const RECORD_SIGNATURE_DOMAIN: &[u8] = b"fitness-report/2 record\n";
/// The only signature algorithm this crate writes or accepts.
pub const SIGNATURE_ALGORITHM: &str = "ed25519";
/// The canonicalisation named inside every signature block.
pub const CANONICALIZATION: &str = "RFC8785";

/// Why an integrity operation failed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IntegrityError {
    #[error(
        "integer {0} would change under RFC 8785 (every number is an IEEE double), so it is refused rather than rounded"
    )]
    IntegerOutOfRange(String),
    #[error("the record is not a JSON object")]
    NotAnObject,
    #[error("the record carries no signature")]
    Unsigned,
    #[error("unsupported signature algorithm {0:?} (expected \"ed25519\")")]
    UnsupportedAlgorithm(String),
    #[error("unsupported canonicalization {0:?} (expected \"RFC8785\")")]
    UnsupportedCanonicalization(String),
    #[error("public key is not 32 base64-encoded bytes of a valid ed25519 point")]
    BadPublicKey,
    #[error("signature is not 64 base64-encoded bytes")]
    BadSignatureEncoding,
    #[error("signature does not match the record's canonical bytes")]
    SignatureMismatch,
    #[error("record file is not valid JSON")]
    NotJson,
    #[error(
        "record file is not in canonical form (RFC 8785), so its bytes are not the bytes that were signed"
    )]
    NotCanonical,
    #[error("signature was made by key {found}, not the expected key {expected}")]
    WrongKey { expected: String, found: String },
}

/// The signature block a signed record carries under `signature`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordSignature {
    /// Always `ed25519`.
    pub algorithm: String,
    /// Always `RFC8785`: the canonical form the signature covers.
    pub canonicalization: String,
    /// The publisher's ed25519 public key, 32 bytes, standard base64.
    pub public_key: String,
    /// The signature, 64 bytes, standard base64.
    pub value: String,
}

/// Canonical JSON bytes of `value` (RFC 8785).
pub fn canonical_json(value: &Value) -> Result<Vec<u8>, IntegrityError> {
    let mut out = Vec::new();
    write_canonical(value, &mut out)?;
    Ok(out)
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) -> Result<(), IntegrityError> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out)?,
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out)?;
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            // RFC 8785 §3.2.3: sort by the UTF-16 code units of the keys.
            entries.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_string(key, out);
                out.push(b':');
                write_canonical(item, out)?;
            }
            out.push(b'}');
        }
    }
    Ok(())
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\u{8}' => out.extend_from_slice(b"\\b"),
            '\u{c}' => out.extend_from_slice(b"\\f"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn write_number(n: &serde_json::Number, out: &mut Vec<u8>) -> Result<(), IntegrityError> {
    // RFC 8785 reads every number as an IEEE double. An integer is accepted
    // only when its text already is the canonical text of that double, so a
    // value is never silently changed by canonicalisation.
    let integer = n.as_u64().map(|u| (u as f64, u.to_string()));
    let integer = integer.or_else(|| n.as_i64().map(|i| (i as f64, i.to_string())));
    if let Some((f, text)) = integer {
        let canonical = ecmascript_number(f);
        if canonical != text {
            return Err(IntegrityError::IntegerOutOfRange(text));
        }
        out.extend_from_slice(canonical.as_bytes());
        return Ok(());
    }
    // serde_json never holds a non-finite f64.
    out.extend_from_slice(ecmascript_number(n.as_f64().unwrap_or(0.0)).as_bytes());
    Ok(())
}

/// `Number.prototype.toString` for a finite double (ECMA-262 §6.1.6.1.20).
pub fn ecmascript_number(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        // -0 prints as 0; non-finite values cannot occur in JSON.
        return "0".to_owned();
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let (digits, exp) = shortest_digits(f.abs());
    let k = digits.len() as i32;
    let n = exp + 1; // position of the decimal point relative to the digits
    let body = if k <= n && n <= 21 {
        let mut s = digits.clone();
        s.extend(std::iter::repeat_n('0', (n - k) as usize));
        s
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{}", "0".repeat((-n) as usize), digits)
    } else {
        let e = n - 1;
        let e_sign = if e < 0 { '-' } else { '+' };
        if k == 1 {
            format!("{digits}e{e_sign}{}", e.abs())
        } else {
            format!("{}.{}e{e_sign}{}", &digits[..1], &digits[1..], e.abs())
        }
    };
    format!("{sign}{body}")
}

/// Shortest round-trip decimal digits of a positive finite double and the
/// decimal exponent of the first digit, with ECMAScript's tie rule: when two
/// shortest candidates are equally close, the even one.
fn shortest_digits(f: f64) -> (String, i32) {
    let split = |sci: &str| -> (String, i32) {
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
        let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
        (digits, exp.parse().unwrap_or(0))
    };
    // Rust's `{:e}` gives the shortest round-trip digits.
    let (digits, exp) = split(&format!("{f:e}"));
    let k = digits.len();
    let odd = digits
        .as_bytes()
        .last()
        .is_some_and(|d| (d - b'0') % 2 == 1);
    // Two shortest candidates can only be equally close when they are as long
    // as a double's precision allows (15 to 17 digits).
    if !odd || k < 15 {
        return (digits, exp);
    }
    // A tie is only possible when the exact value of `f` is a decimal of
    // k + 1 digits ending in 5; `{:.800e}` is exact for every double.
    let (exact, exact_exp) = split(&format!("{f:.800e}"));
    let exact = exact.trim_end_matches('0');
    if exact_exp != exp || exact.len() != k + 1 || !exact.ends_with('5') {
        return (digits, exp);
    }
    let lower = &exact[..k];
    let other = if digits == lower {
        increment_decimal(lower)
    } else {
        Some(lower.to_owned())
    };
    let Some(other) = other.filter(|o| o.len() == k) else {
        return (digits, exp);
    };
    let reparsed = format!("{}.{}e{exp}", &other[..1], &other[1..]).parse::<f64>();
    if reparsed == Ok(f) {
        (other, exp)
    } else {
        (digits, exp)
    }
}

/// Add one to a string of decimal digits; `None` if it would grow.
fn increment_decimal(digits: &str) -> Option<String> {
    let mut bytes = digits.as_bytes().to_vec();
    for b in bytes.iter_mut().rev() {
        if *b == b'9' {
            *b = b'0';
        } else {
            *b += 1;
            return String::from_utf8(bytes).ok();
        }
    }
    None
}

/// Lowercase hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// An incremental sha256 for streaming a tape from disk without holding it.
#[derive(Default, Clone)]
pub struct Sha256Stream {
    hasher: Sha256,
    bytes: u64,
}

impl Sha256Stream {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn update(&mut self, chunk: &[u8]) {
        self.hasher.update(chunk);
        self.bytes += chunk.len() as u64;
    }
    /// The lowercase hex digest and the number of bytes hashed.
    pub fn finish(self) -> (String, u64) {
        (hex::encode(self.hasher.finalize()), self.bytes)
    }
}

/// sha256 of the canonical JSON of a record (its content hash).
pub fn record_hash(record: &Value) -> Result<String, IntegrityError> {
    Ok(sha256_hex(&canonical_json(record)?))
}

/// The exact bytes a record signature covers: the domain tag followed by the
/// canonical JSON of the record without its `signature` member.
pub fn signing_message(record: &Value) -> Result<Vec<u8>, IntegrityError> {
    let Value::Object(map) = record else {
        return Err(IntegrityError::NotAnObject);
    };
    let mut unsigned = map.clone();
    unsigned.shift_remove("signature");
    let mut message = RECORD_SIGNATURE_DOMAIN.to_vec();
    message.extend_from_slice(&canonical_json(&Value::Object(unsigned))?);
    Ok(message)
}

/// Short, printable id of a public key: the first 16 hex digits of its sha256.
pub fn key_fingerprint(public_key: &[u8; 32]) -> String {
    sha256_hex(public_key)[..16].to_owned()
}

/// Decode a base64 public key.
pub fn decode_public_key(b64: &str) -> Result<VerifyingKey, IntegrityError> {
    let bytes = BASE64
        .decode(b64.trim())
        .map_err(|_| IntegrityError::BadPublicKey)?;
    let array: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| IntegrityError::BadPublicKey)?;
    VerifyingKey::from_bytes(&array).map_err(|_| IntegrityError::BadPublicKey)
}

/// The publisher key that verified a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedBy {
    pub public_key: [u8; 32],
    pub fingerprint: String,
}

/// Verify the signature a record carries. With `expected_key` (base64) the
/// signature must also come from that key, so a record re-signed by someone
/// else is refused.
pub fn verify_record(
    record: &Value,
    expected_key: Option<&str>,
) -> Result<VerifiedBy, IntegrityError> {
    let Value::Object(map) = record else {
        return Err(IntegrityError::NotAnObject);
    };
    let block = map.get("signature").ok_or(IntegrityError::Unsigned)?;
    let block: RecordSignature =
        serde_json::from_value(block.clone()).map_err(|_| IntegrityError::BadSignatureEncoding)?;
    if block.algorithm != SIGNATURE_ALGORITHM {
        return Err(IntegrityError::UnsupportedAlgorithm(block.algorithm));
    }
    if block.canonicalization != CANONICALIZATION {
        return Err(IntegrityError::UnsupportedCanonicalization(
            block.canonicalization,
        ));
    }
    let key = decode_public_key(&block.public_key)?;
    if let Some(expected) = expected_key {
        let expected = decode_public_key(expected)?;
        if expected != key {
            return Err(IntegrityError::WrongKey {
                expected: key_fingerprint(expected.as_bytes()),
                found: key_fingerprint(key.as_bytes()),
            });
        }
    }
    let sig_bytes = BASE64
        .decode(block.value.trim())
        .map_err(|_| IntegrityError::BadSignatureEncoding)?;
    let sig_array: [u8; 64] = sig_bytes
        .as_slice()
        .try_into()
        .map_err(|_| IntegrityError::BadSignatureEncoding)?;
    let signature = DalekSignature::from_bytes(&sig_array);
    let message = signing_message(record)?;
    // Strict: no weak keys, no malleable (non-canonical) signatures.
    key.verify_strict(&message, &signature)
        .map_err(|_| IntegrityError::SignatureMismatch)?;
    Ok(VerifiedBy {
        public_key: key.to_bytes(),
        fingerprint: key_fingerprint(key.as_bytes()),
    })
}

/// Verify a record file as stored: the bytes must be the record's canonical
/// JSON (optionally followed by one `\n`) and carry a valid signature. Because
/// a stored record is canonical, any change to any byte of the file either
/// breaks the JSON, leaves the canonical form, or changes the signed content.
pub fn verify_record_bytes(
    bytes: &[u8],
    expected_key: Option<&str>,
) -> Result<(Value, VerifiedBy), IntegrityError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|_| IntegrityError::NotJson)?;
    let canonical = canonical_json(&value)?;
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body != canonical.as_slice() {
        return Err(IntegrityError::NotCanonical);
    }
    let by = verify_record(&value, expected_key)?;
    Ok((value, by))
}

/// Who vouches for a record, read against the key its site publishes. The
/// board rows, the record page and the replay badge all show this one
/// state; only [`SignatureState::Verified`] may be called verified.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum SignatureState {
    /// Signed by the site's publisher key, and the signature verifies.
    Verified { fingerprint: String },
    /// The signature verifies, but it was made by a key other than the
    /// one the site publishes.
    OtherKey { fingerprint: String, site: String },
    /// The signature verifies, but the site publishes no key to hold it
    /// against, so nothing ties it to this site's publisher.
    NoSiteKey { fingerprint: String },
    /// The record carries no signature.
    Unsigned,
    /// The signature (or the site's key) cannot be checked, or does not
    /// match the record's bytes; why, in words.
    Invalid { why: String },
}

impl SignatureState {
    /// A stable one-word name for the state (`verified`, `other-key`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            SignatureState::Verified { .. } => "verified",
            SignatureState::OtherKey { .. } => "other-key",
            SignatureState::NoSiteKey { .. } => "no-site-key",
            SignatureState::Unsigned => "unsigned",
            SignatureState::Invalid { .. } => "invalid",
        }
    }

    /// One sentence saying what was checked and what it found.
    /// `site_key` tells whether the site publishes a key (for `Unsigned`).
    pub fn sentence(&self, site_key: bool) -> String {
        match self {
            SignatureState::Verified { fingerprint } => format!(
                "Signed by this site's publisher key {fingerprint}; the signature verifies."
            ),
            SignatureState::OtherKey { fingerprint, site } => format!(
                "Not verified: signed by key {fingerprint}, not by this site's publisher key {site}."
            ),
            SignatureState::NoSiteKey { fingerprint } => format!(
                "Not verified: signed by key {fingerprint}, but this site publishes no key to check it against."
            ),
            SignatureState::Unsigned if site_key => {
                "Not verified: the record is unsigned, though this site publishes a key.".to_owned()
            }
            SignatureState::Unsigned => {
                "Unsigned: nothing vouches for this record, and the site publishes no key."
                    .to_owned()
            }
            SignatureState::Invalid { why } => format!("Not verified: {why}."),
        }
    }
}

/// The signature state of a parsed record against the site's key (base64).
pub fn signature_state(record: &Value, site_key: Option<&str>) -> SignatureState {
    let site = match site_key.map(decode_public_key) {
        None => None,
        Some(Ok(key)) => Some(key),
        Some(Err(_)) => {
            return SignatureState::Invalid {
                why: "the site's publisher key is not a valid ed25519 key".to_owned(),
            };
        }
    };
    match verify_record(record, None) {
        Err(IntegrityError::Unsigned) => SignatureState::Unsigned,
        Err(e) => SignatureState::Invalid {
            why: format!("record signature: {e}"),
        },
        Ok(by) => match site {
            None => SignatureState::NoSiteKey {
                fingerprint: by.fingerprint,
            },
            Some(key) if key.as_bytes() == &by.public_key => SignatureState::Verified {
                fingerprint: by.fingerprint,
            },
            Some(key) => SignatureState::OtherKey {
                fingerprint: by.fingerprint,
                site: key_fingerprint(key.as_bytes()),
            },
        },
    }
}

/// The signature state of a record file as stored: its bytes must also be
/// the record's canonical form, so no byte of the file escapes the check.
pub fn signature_state_of_bytes(bytes: &[u8], site_key: Option<&str>) -> SignatureState {
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return SignatureState::Invalid {
            why: IntegrityError::NotJson.to_string(),
        };
    };
    let canonical = match canonical_json(&value) {
        Ok(c) => c,
        Err(e) => return SignatureState::Invalid { why: e.to_string() },
    };
    if value.get("signature").is_some() && bytes.strip_suffix(b"\n").unwrap_or(bytes) != canonical {
        return SignatureState::Invalid {
            why: IntegrityError::NotCanonical.to_string(),
        };
    }
    signature_state(&value, site_key)
}

/// The bytes a record file holds: canonical JSON and one trailing newline.
pub fn record_file_bytes(record: &Value) -> Result<Vec<u8>, IntegrityError> {
    let mut bytes = canonical_json(record)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Signing: native targets only. The caller supplies the 32-byte secret seed
/// (the recorder reads it from a key file made by `fitness keygen`).
#[cfg(not(target_arch = "wasm32"))]
pub mod signing {
    use super::*;
    use ed25519_dalek::{Signer as _, SigningKey};

    /// The base64 public key that belongs to a secret seed.
    pub fn public_key_b64(seed: &[u8; 32]) -> String {
        BASE64.encode(SigningKey::from_bytes(seed).verifying_key().as_bytes())
    }

    /// Sign a record in place: any old `signature` member is replaced by a new
    /// one over the canonical bytes of everything else.
    pub fn sign_record(record: &mut Value, seed: &[u8; 32]) -> Result<(), IntegrityError> {
        let key = SigningKey::from_bytes(seed);
        let message = signing_message(record)?;
        let signature = key.sign(&message);
        let block = RecordSignature {
            algorithm: SIGNATURE_ALGORITHM.to_owned(),
            canonicalization: CANONICALIZATION.to_owned(),
            public_key: BASE64.encode(key.verifying_key().as_bytes()),
            value: BASE64.encode(signature.to_bytes()),
        };
        let Value::Object(map) = record else {
            return Err(IntegrityError::NotAnObject);
        };
        // `signing_message` succeeded, so the block always serialises.
        let block = serde_json::to_value(block).unwrap_or(Value::Null);
        map.insert("signature".to_owned(), block);
        Ok(())
    }
}
