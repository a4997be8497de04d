//! Discovery that reads what the server says (issue 57), against a real
//! code-analysis server (installed by scripts/setup) over a project the
//! test makes: every tool of it needs a project registered first, a step
//! whose words say it writes; the walk makes it once, shows that no file
//! and no listing it watches changed, and names it a setup step the run
//! may make. Without the step, every project tool fails ("Project ... not
//! found"). Its `language` parameter takes the values its own
//! `list_languages` lists, never an invented word.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::servers::{installed, suite};
use common::{s, tree};
use fitness_recorder::suite::{GenerateOptions, GeneratorId};
use serde_json::Value;

/// A small Python project under git.
fn project(dir: &Path) {
    let files = [
        (
            "stock.py",
            "class Item:\n    def __init__(self, sku, qty):\n        self.sku = sku\n        self.qty = qty\n\n\ndef total(items):\n    return sum(i.qty for i in items)\n",
        ),
        (
            "report.py",
            "from stock import total\n\n\ndef show(items):\n    print(total(items))\n",
        ),
        (
            "prices.py",
            "RATES = {'EUR': 1.0, 'GBP': 0.86}\n\n\ndef convert(amount, to):\n    return amount * RATES[to]\n",
        ),
        (
            "cli.py",
            "import sys\nfrom report import show\n\n\ndef main():\n    show([])\n\n\nif __name__ == '__main__':\n    main()\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("a file");
    }
    common::git(dir, &["init", "-q", "."]);
    common::git(dir, &["add", "."]);
    common::git(
        dir,
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "init",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_is_registered_as_a_setup_step_and_languages_come_from_the_servers_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("shop");
    std::fs::create_dir(&root).expect("the project");
    project(&root);
    let before = tree(&root);
    let server = installed("venv-tree-sitter/bin/mcp-server-tree-sitter");
    let mut opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    // The operator's folder, as a command line would give it.
    opts.seed_handles = vec![s(&root).to_owned()];
    let tape_dir = dir.path().join("tape");
    std::fs::create_dir(&tape_dir).expect("tape dir");
    let (report, tape) = suite(&server, &[], opts, None, &tape_dir).await;
    assert_eq!(tree(&root), before, "the project is as it was");

    let walk = report.walk.as_ref().expect("walk stats");
    assert_eq!(
        walk.setup_steps,
        ["register_project_tool"],
        "{:#?}",
        walk.discovery
    );
    assert!(
        !report.writers.contains("register_project_tool"),
        "the run may make the setup step"
    );
    let setup = walk
        .discovery
        .iter()
        .find(|m| m.name == "setup")
        .expect("the ledger names the step");
    assert!(
        setup.worked && setup.found.contains("as it was"),
        "{setup:?}"
    );

    // After the step, project tools answer about the project by its name.
    let answered: BTreeSet<String> = tape
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["dir"] == "in" && v["raw"]["method"] == "tools/call")
        .filter(|v| v["raw"]["params"]["arguments"]["project"] == "shop")
        .filter_map(|v| v["raw"]["params"]["name"].as_str().map(str::to_owned))
        .collect();
    assert!(
        answered.len() >= 3,
        "project tools called with the registered project: {answered:?}"
    );
    let covered: BTreeSet<&str> = report
        .suite
        .tasks
        .iter()
        .filter_map(|t| t.solution.last().map(|c| c.tool.as_str()))
        .collect();
    assert!(
        covered.iter().any(|t| [
            "get_file",
            "get_file_metadata",
            "analyze_project",
            "get_symbols",
            "get_ast",
            "list_files"
        ]
        .contains(t)),
        "a task about the code: {covered:?}"
    );

    // Every language the walk gave a tool is one the server listed.
    let listed: Vec<String> = tape
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let text = v["raw"]["result"]["content"][0]["text"]
                .as_str()?
                .to_owned();
            let parsed: Value = serde_json::from_str(&text).ok()?;
            parsed["available"].as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            })
        })
        .next()
        .expect("list_languages answered");
    for t in &report.suite.tasks {
        for call in &t.solution {
            if let Some(language) = call.arguments.get("language").and_then(Value::as_str) {
                assert!(
                    listed.iter().any(|l| l == language),
                    "{}: the language {language:?} is not one the server lists",
                    t.prompt
                );
            }
        }
    }
}
