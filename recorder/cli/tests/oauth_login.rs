//! `fitness login` against an implementation we did not write: the
//! TypeScript SDK's example server (`simpleStreamableHttp --oauth`, from
//! the npm package scripts/setup installs), whose demo authorization server
//! approves without a person. Login (non-interactive), probe and a sim run
//! with `--login`; the record's credential context, its detail and the
//! surface delta; and no token anywhere outside the token store.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{ServerGuard, free_port, run_bounded_in, s, spawn_guarded, text, wait_for_port};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(300);

/// The SDK's example server with `extra` (`--oauth`, and `--oauth-strict`
/// for its resource check), on
/// two free ports. It binds every interface: the tests connect through
/// localhost (the name its metadata uses), and the guard kills it by PID.
fn sdk_server(extra: &[&str]) -> ServerGuard {
    let tools = std::env::var_os("FITNESS_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME"))
                .join(".cache/fitness-report/tools")
        });
    let example = tools.join(
        "node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js",
    );
    assert!(
        example.is_file(),
        "the TypeScript SDK is not installed at {}: run scripts/setup",
        example.display()
    );
    let (mcp, auth) = (free_port(), free_port());
    let guard = spawn_guarded(
        Path::new("node"),
        &[&[s(&example)], extra].concat(),
        &[
            ("MCP_PORT", mcp.to_string()),
            ("MCP_AUTH_PORT", auth.to_string()),
        ],
        format!("http://localhost:{mcp}/mcp"),
    );
    wait_for_port(mcp, Duration::from_secs(60));
    wait_for_port(auth, Duration::from_secs(60));
    guard
}

/// Every file under `dir`, as text (lossy).
fn all_text(dir: &Path) -> String {
    common::tree(dir)
        .into_iter()
        .map(|(_, bytes)| String::from_utf8_lossy(&bytes).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn login_probe_and_run_against_the_sdks_oauth_server_keep_the_token_in_its_store() {
    // Strict: the server takes only tokens issued for itself (the
    // `resource` the login asked for).
    let server = sdk_server(&["--oauth", "--oauth-strict"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let logins = dir.path().join("logins");
    let env = [("FITNESS_LOGIN_DIR", s(&logins).to_owned())];
    let url = server.url.as_str();

    // Without a login, the 401 says what to run, in words.
    let refused = run_bounded_in(None, &env, &["probe", url], LIMIT);
    assert!(!refused.status.success());
    let said = text(&refused);
    assert!(
        said.contains(&format!("run `fitness login {url}`")),
        "{said}"
    );
    assert!(!said.contains("TappedTransport"), "{said}");

    let login = run_bounded_in(None, &env, &["login", url, "--non-interactive"], LIMIT);
    assert!(login.status.success(), "{}", text(&login));
    let said = String::from_utf8_lossy(&login.stdout).into_owned();
    assert!(said.contains("scopes: mcp:tools"), "{said}");
    assert!(said.contains("7 tool(s) listed with it"), "{said}");

    // One login file, the operator's alone, holding the token.
    let files: Vec<PathBuf> = std::fs::read_dir(&logins)
        .expect("the login directory")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&files[0]), 0o600);
        assert_eq!(mode(&logins), 0o700);
    }
    let stored: Value =
        serde_json::from_slice(&std::fs::read(&files[0]).expect("read")).expect("json");
    let token = stored["credentials"]["token_response"]["access_token"]
        .as_str()
        .expect("an access token")
        .to_owned();
    assert!(token.len() >= 16, "a real token");

    let probe = run_bounded_in(
        None,
        &env,
        &[
            "probe",
            url,
            "--login",
            "--json",
            "--tape",
            s(&dir.path().join("probe")),
        ],
        LIMIT,
    );
    assert!(probe.status.success(), "{}", text(&probe));
    let report: Value = serde_json::from_slice(&probe.stdout).expect("probe json");
    assert_eq!(
        report["tools"].as_array().map(Vec::len),
        Some(7),
        "{report:#}"
    );

    let runs = dir.path().join("runs");
    let run = run_bounded_in(
        None,
        &env,
        &[
            "run",
            url,
            "--login",
            "--runner",
            "sim/diligent",
            "--out",
            s(&runs),
            "--json",
        ],
        LIMIT,
    );
    assert!(run.status.success(), "{}", text(&run));
    let summary: Value = serde_json::from_slice(&run.stdout).expect("run json");
    let run_dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("record.json")).expect("record"))
            .expect("record json");
    let server_rec = &record["server"];
    // A login is the operator's own account; what it was is detail.
    assert_eq!(
        server_rec["credential_context"], "owner-key",
        "{server_rec:#}"
    );
    assert_eq!(server_rec["credential"]["kind"], "oauth");
    assert_eq!(
        server_rec["credential"]["scopes"],
        serde_json::json!(["mcp:tools"])
    );
    // Anonymously the server refuses the listing: refused, not empty.
    assert_eq!(
        server_rec["surface_delta"]["refused_anonymously"], 401,
        "{server_rec:#}"
    );
    let wire = std::fs::read_to_string(run_dir.join("mcp.jsonl")).expect("wire tape");
    assert!(
        wire.contains("surface::anonymous"),
        "the anonymous listing is taped"
    );

    // The canary: the token is nowhere but the store: not in a tape, a
    // record, a suite, the output of any command.
    for (what, haystack) in [
        ("the probe's tape", all_text(&dir.path().join("probe"))),
        ("the run directory", all_text(&runs)),
        ("the login's output", text(&login)),
        ("the probe's output", text(&probe)),
        ("the run's output", text(&run)),
    ] {
        assert!(!haystack.contains(&token), "the token is in {what}");
    }
    drop(server);
}

#[test]
fn a_server_that_asks_for_no_login_is_told_so() {
    let server = common::http_fixture("correct");
    let dir = tempfile::tempdir().expect("temp dir");
    let env = [(
        "FITNESS_LOGIN_DIR",
        s(&dir.path().join("logins")).to_owned(),
    )];
    let out = run_bounded_in(
        None,
        &env,
        &["login", &server.url, "--non-interactive"],
        LIMIT,
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("without asking for authorization"),
        "{}",
        text(&out)
    );
    // --login with no login names the command to run.
    let probe = run_bounded_in(None, &env, &["probe", &server.url, "--login"], LIMIT);
    assert!(!probe.status.success());
    assert!(text(&probe).contains("no login for"), "{}", text(&probe));
    assert!(!dir.path().join("logins").exists(), "nothing was stored");
}

/// A server that stops taking the credential in the middle of a run (a
/// revoked token): the run ends VOID, "lost authorization", as a lost
/// server does, never as the server's thin surface; the token reaches no
/// file of the run.
#[test]
fn a_credential_refused_mid_run_ends_it_void_as_lost_authorization() {
    let server = common::http_fixture("auth-expiring");
    let dir = tempfile::tempdir().expect("temp dir");
    let runs = dir.path().join("runs");
    let token = fitness_recorder::test_servers::AUTH_FIXTURE_TOKEN;
    let env = [("FITNESS_MCP_BEARER_TOKEN", token.to_owned())];
    let run = run_bounded_in(
        None,
        &env,
        &[
            "run",
            &server.url,
            "--runner",
            "sim/diligent",
            "--out",
            s(&runs),
            "--json",
        ],
        LIMIT,
    );
    let summary: Value =
        serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&run)));
    assert_eq!(summary["outcome"], "VOID", "{summary:#}");
    let run_dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("record.json")).expect("record"))
            .expect("record json");
    let notes = record["notes"]["own"].to_string();
    assert!(
        notes.contains("lost authorization (the server stopped taking the credential)"),
        "{notes}"
    );
    assert!(notes.contains("401 Unauthorized"), "{notes}");
    assert_eq!(record["server"]["credential"]["kind"], "bearer");
    assert_eq!(
        record["server"]["surface_delta"]["refused_anonymously"],
        401
    );
    assert!(
        !all_text(&runs).contains(token),
        "the token is in the run directory"
    );
    assert!(!text(&run).contains(token), "the token is in the output");
}

/// The interactive login: the authorization URL goes to `$BROWSER` (here a
/// script that fetches it and follows its redirects, as a browser whose
/// user approves would), and the code comes back to the loopback listener
/// on 127.0.0.1.
#[test]
fn an_interactive_login_comes_back_to_the_loopback_redirect() {
    let server = sdk_server(&["--oauth"]);
    let dir = tempfile::tempdir().expect("temp dir");
    let browser = dir.path().join("browser.py");
    std::fs::write(
        &browser,
        "#!/usr/bin/env python3\nimport sys, urllib.request\nurllib.request.urlopen(sys.argv[1], timeout=30).read()\n",
    )
    .expect("write the browser");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let logins = dir.path().join("logins");
    let env = [
        ("FITNESS_LOGIN_DIR", s(&logins).to_owned()),
        ("BROWSER", s(&browser).to_owned()),
    ];
    let login = run_bounded_in(None, &env, &["login", &server.url, "--wait", "60"], LIMIT);
    assert!(login.status.success(), "{}", text(&login));
    // The URL is printed for a person either way; the login is kept.
    assert!(
        text(&login).contains("Open this URL to log in"),
        "{}",
        text(&login)
    );
    assert!(String::from_utf8_lossy(&login.stdout).contains("logged in to"));
    assert_eq!(std::fs::read_dir(&logins).expect("logins").count(), 1);
}
