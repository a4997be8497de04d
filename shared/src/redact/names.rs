//! Which names carry credentials: query parameters and command-line flags
//! ([`credential_name`]), JSON fields, and the words a credential-named
//! field's text always holds ([`FIELD_WORDS`]).

/// Whether a query parameter or command-line flag named `name` (`api_key`,
/// `token`, `client-secret`, ...) carries a credential.
pub fn credential_name(name: &str) -> bool {
    credential_param(name)
}

/// Query parameter names whose values are credentials.
pub(super) fn credential_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    matches!(
        n.as_str(),
        "key"
            | "api_key"
            | "apikey"
            | "token"
            | "access_token"
            | "auth"
            | "auth_token"
            | "authorization"
            | "password"
            | "passwd"
            | "pwd"
            | "secret"
            | "client_secret"
            | "sig"
            | "signature"
            | "x_amz_signature"
            | "x_amz_credential"
            | "x_amz_security_token"
            | "session"
            | "sessionid"
            | "session_id"
            | "code"
    ) || n.ends_with("_token")
        || n.ends_with("_key")
        || n.ends_with("_secret")
        || n.ends_with("_password")
}

/// What the text around every name [`credential_field`] accepts looks like
/// (`...token":`, `...token\":` inside a JSON text in a string), and the
/// context of the `authorization`, `bearer` and `credential-assignment`
/// rules, escapes allowed: a first look that must never miss one.
pub(super) const FIELD_WORDS: &str = r#"(?i)(?:key|token|bearer|authorization|cookie|passwd|password|secret|session[_-]?id|credentials?)["']?\\?["']?(?:\s|\\[nrtbf])*[:=]|bearer(?:\s|\\[nrtbf])"#;

/// JSON field names whose string values are credentials.
pub(super) fn credential_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    matches!(
        n.as_str(),
        "api_key"
            | "apikey"
            | "x_api_key"
            | "token"
            | "access_token"
            | "refresh_token"
            | "id_token"
            | "auth_token"
            | "bearer"
            | "authorization"
            | "proxy_authorization"
            | "cookie"
            | "set_cookie"
            | "password"
            | "passwd"
            | "secret"
            | "client_secret"
            | "private_key"
            | "mcp_session_id"
            | "session_token"
            | "x_amz_security_token"
    ) || n.ends_with("_api_key")
        || n.ends_with("_apikey")
        || n.ends_with("_secret")
        || n.ends_with("_password")
        || n.ends_with("_access_token")
        || n.ends_with("_auth_token")
}
