//! The floors ARCHITECTURE.md draws hold in the code: no room of a listed
//! folder uses a room on its own floor or above it, or its folder's face,
//! and every module is on a floor (`fitness_e2e::floors`).

use std::path::Path;

use fitness_e2e::floors::{check, parse};
use fitness_e2e::workspace_root;

#[test]
fn every_import_keeps_to_the_floors_architecture_md_draws() {
    let root = workspace_root();
    let text = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let floors = parse(&text).expect("its floors blocks parse");
    let folders: Vec<&str> = floors.iter().map(|f| f.folder.as_str()).collect();
    for crate_src in [
        "shared/src",
        "viewer/src",
        "recorder/engine/src",
        "recorder/cli/src",
    ] {
        assert!(
            folders.contains(&crate_src),
            "no floors for {crate_src}: {folders:?}"
        );
    }
    let violations = check(&root, &floors).expect("the tree reads");
    assert!(
        violations.is_empty(),
        "imports against the floors of ARCHITECTURE.md:\n{}",
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[test]
fn a_use_up_a_floor_beside_it_or_of_the_face_is_reported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(
        root,
        "k/src/lib.rs",
        "pub mod high;\npub mod low;\npub mod side;\npub struct Face;\n",
    );
    write(root, "k/src/high.rs", "use crate::low::Thing;\n");
    // The violations: a use up a floor, one beside, one of the face.
    write(
        root,
        "k/src/low.rs",
        "pub struct Thing;\nfn f() { let _ = crate::high::g(); }\n",
    );
    write(
        root,
        "k/src/side.rs",
        "use super::{high::x, Face};\n#[cfg(test)]\nuse crate::high::ok_in_tests;\n",
    );
    let floors = parse("```floors\nk/src\nhigh side\nlow\n```\n").expect("parses");
    let found: Vec<String> = check(root, &floors)
        .expect("reads")
        .iter()
        .map(|v| format!("{}:{}", v.file, v.line))
        .collect();
    assert_eq!(
        found,
        ["k/src/low.rs:2", "k/src/side.rs:1", "k/src/side.rs:1"],
        "{found:?}"
    );
    // A module the floors do not list is reported too.
    write(root, "k/src/unlisted.rs", "");
    let unlisted = check(root, &floors).expect("reads");
    assert!(
        unlisted.iter().any(|v| v.text == "unlisted"),
        "{unlisted:?}"
    );
}
