//! Admission rules, the null screen, trimming and the suite hash, through the
//! library API (no server needed).

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::model::types::{
    ChatRequest, ChatResponse, ContentBlock, LlmError, LlmErrorClass, ModelClient, ModelId,
    PlannedCall, Role, StopReason, Usage,
};
use fitness_recorder::suite::admission::{AdmissionContext, admit};
use fitness_recorder::suite::screen::null_screen;
use fitness_recorder::suite::task::{Candidate, HandleBinding, Predicate, Task};
use fitness_recorder::suite::{GenerateOptions, GeneratorId, suite_hash, trim};
use fitness_shared::record::AccessMode;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

fn tool(name: &str, description: &str) -> rmcp::model::Tool {
    let Value::Object(schema) = json!({"type": "object", "properties": {"q": {"type": "string"}}})
    else {
        unreachable!("a literal object")
    };
    rmcp::model::Tool::new(name.to_owned(), description.to_owned(), Arc::new(schema))
}

fn tools() -> Vec<rmcp::model::Tool> {
    vec![
        tool("search", "Search the catalogue by keyword."),
        tool(
            "get-item",
            "Get one catalogue item; the house colour is vermilion.",
        ),
        tool("delete-item", "Delete an item."),
    ]
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A task that passes every rule.
fn good(prompt: &str, answer: &str) -> Task {
    Task {
        id: String::new(),
        prompt: prompt.to_owned(),
        expected_tools: vec!["search".into()],
        answer_key: answer.to_owned(),
        check: Predicate::Substring {
            value: answer.to_owned(),
            case_insensitive: true,
        },
        destructive: false,
        solution: vec![PlannedCall {
            tool: "search".into(),
            arguments: args(json!({"q": "lamps"})),
        }],
        handles: vec![],
        rationale: Some("the catalogue is the server's".into()),
        origin: None,
        kind: Default::default(),
        state_check: None,
        shape: None,
    }
}

struct Fixture {
    tools: Vec<rmcp::model::Tool>,
    destructive: BTreeSet<String>,
    exclude: Vec<String>,
    answer_rules: bool,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            tools: tools(),
            destructive: ["delete-item".to_owned()].into_iter().collect(),
            exclude: vec!["Which lamp did the EARLIER batch ask about?".into()],
            answer_rules: false,
        }
    }

    fn ctx(&self, credential: AccessMode) -> AdmissionContext<'_> {
        AdmissionContext {
            tools: &self.tools,
            instructions: Some("Prices are in euros. The founder is Ada Quill."),
            access: credential,
            writes: credential == AccessMode::Sandbox,
            writers: &self.destructive,
            exclude_prompts: &self.exclude,
            answer_rules: self.answer_rules,
            worded_rules: false,
        }
    }
}

/// Admit one candidate (after `before`) and return the rule that rejected
/// it, or `None` when admitted.
fn rule_for(task: Task, before: Vec<Task>, credential: AccessMode) -> Option<String> {
    let f = Fixture::new();
    let mut candidates: Vec<Candidate> = before
        .into_iter()
        .enumerate()
        .map(|(i, t)| Candidate::new(format!("b{i}"), Ok(t)))
        .collect();
    candidates.push(Candidate::new("probe".into(), Ok(task)));
    let (admitted, rejections) = admit(candidates, &f.ctx(credential));
    let r = rejections.iter().find(|r| r.candidate == "probe");
    assert_eq!(
        admitted.iter().any(|t| t.id == "probe"),
        r.is_none(),
        "a candidate is admitted or rejected, never both"
    );
    r.map(|r| {
        assert!(!r.detail.is_empty(), "a rejection says why");
        r.rule.to_owned()
    })
}

fn rule(task: Task) -> Option<String> {
    rule_for(task, vec![], AccessMode::ReadOnly)
}

#[test]
fn a_sound_task_is_admitted() {
    assert_eq!(
        rule(good("Search for lamps and name the cheapest.", "Lumo")),
        None
    );
}

#[test]
fn answer_leaks_are_rejected_wherever_they_are() {
    // In the prompt.
    assert_eq!(
        rule(good("Search lamps; is the answer Lumo?", "Lumo")).as_deref(),
        Some("answer-leak")
    );
    // In the solution's bound arguments.
    let mut t = good("Search for lamps and name the cheapest.", "Lumo");
    t.solution[0].arguments = args(json!({"q": "Lumo lamps"}));
    assert_eq!(rule(t).as_deref(), Some("answer-leak"));
    // In a tool description.
    assert_eq!(
        rule(good("What is the house colour?", "vermilion")).as_deref(),
        Some("answer-leak")
    );
    // In the server instructions.
    assert_eq!(
        rule(good("Who founded the shop?", "Ada Quill")).as_deref(),
        Some("answer-leak")
    );
    // A longer word holding the answer is not a leak.
    let mut t = good("Search for lamps and name the cheapest.", "Lumo");
    t.solution[0].arguments = args(json!({"q": "Lumosity lamps"}));
    assert_eq!(rule(t), None);
}

#[test]
fn the_answer_leak_gate_and_admission_apply_one_test() {
    use fitness_recorder::suite::admission::leak_place;
    // A column `month` read through the table `monthly_readings` gives
    // nothing away; the run's gate once flagged it by substring where
    // admission had passed it.
    let mut t = good("Find the date column of the readings.", "month");
    t.solution[0].arguments = args(json!({"table": "monthly_readings"}));
    assert_eq!(leak_place(&t, None, &[]), None);
    t.solution[0].arguments = args(json!({"table": "month"}));
    assert_eq!(
        leak_place(&t, None, &[]).as_deref(),
        Some("solution arguments (call 0, `search`)")
    );
    let t = good("Is the answer month?", "month");
    assert_eq!(leak_place(&t, None, &[]).as_deref(), Some("prompt"));
    assert_eq!(
        leak_place(&good("Which?", "month"), Some("Each month is kept."), &[]).as_deref(),
        Some("server instructions")
    );
}

#[test]
fn permissive_and_invalid_checks_are_rejected() {
    let with = |check: Predicate| {
        let mut t = good("Search for lamps and name the cheapest.", "Lumo");
        t.check = check;
        rule(t)
    };
    for permissive in [
        Predicate::Substring {
            value: "L".into(),
            case_insensitive: true,
        },
        Predicate::Regex {
            pattern: ".*".into(),
        },
        Predicate::NumberWithin {
            value: 10.0,
            tolerance: 2e6,
        },
        Predicate::AllOf { of: vec![] },
    ] {
        assert_eq!(
            with(permissive.clone()).as_deref(),
            Some("check-too-permissive"),
            "{permissive:?}"
        );
    }
    for invalid in [
        Predicate::Regex {
            pattern: "(unclosed".into(),
        },
        Predicate::JsonPath {
            path: "a.b".into(),
            equals: json!(1),
        },
        Predicate::NumberWithin {
            value: 3.0,
            tolerance: -1.0,
        },
    ] {
        assert_eq!(
            with(invalid.clone()).as_deref(),
            Some("check-invalid"),
            "{invalid:?}"
        );
    }
}

#[test]
fn a_check_the_prompt_satisfies_is_rejected() {
    let mut t = good("Search for the 3 cheapest lamps.", "Lumo");
    t.check = Predicate::Regex {
        pattern: r"\b3\b".into(),
    };
    t.answer_key = "Lumo 3".into();
    assert_eq!(rule(t).as_deref(), Some("check-matches-prompt"));
}

#[test]
fn a_check_that_rejects_its_own_answer_key_is_rejected() {
    let mut t = good("Search for lamps and name the cheapest.", "Lumo");
    t.check = Predicate::Substring {
        value: "Lumen".into(),
        case_insensitive: false,
    };
    assert_eq!(rule(t).as_deref(), Some("check-rejects-key"));
}

#[test]
fn duplicates_are_rejected_by_prompt_or_by_solution_and_answer() {
    let first = good("Search for lamps and name the cheapest.", "Lumo");
    // The same prompt up to case, spacing and punctuation.
    let again = good("search for LAMPS, and name the cheapest", "Lumo");
    assert_eq!(
        rule_for(again, vec![first.clone()], AccessMode::ReadOnly).as_deref(),
        Some("duplicate")
    );
    // The same solution and answer under another prompt.
    let reworded = good("Which lamp costs least in the catalogue?", "Lumo");
    assert_eq!(
        rule_for(reworded, vec![first.clone()], AccessMode::ReadOnly).as_deref(),
        Some("duplicate")
    );
    // A prompt of an earlier batch.
    assert_eq!(
        rule(good("Which lamp did the earlier batch ask about", "Lumo")).as_deref(),
        Some("duplicate")
    );
    // A rejected candidate does not make a later one a duplicate.
    let leaky = good("Search lamps; is it Lumo?", "Lumo");
    let mut ok = good("Search lamps; is it Lumo?", "Lumo");
    ok.prompt = "Search for lamps and name the cheapest.".into();
    assert_eq!(rule_for(ok, vec![leaky], AccessMode::ReadOnly), None);
}

#[test]
fn unchained_handles_are_rejected_and_chained_ones_admitted() {
    let chained = |handles: Vec<HandleBinding>, placeholder_in: usize| {
        let mut t = good("Find the lamp and read its colour.", "teal");
        t.expected_tools = vec!["search".into(), "get-item".into()];
        t.solution = vec![
            PlannedCall {
                tool: "search".into(),
                arguments: args(json!({"q": "lamp"})),
            },
            PlannedCall {
                tool: "get-item".into(),
                arguments: args(json!({"q": "x"})),
            },
        ];
        t.solution[placeholder_in].arguments = args(json!({"q": "{{handle:item}}"}));
        t.handles = handles;
        t
    };
    let binding = |p, c| HandleBinding {
        name: "item".into(),
        produced_by: p,
        consumed_by: c,
    };
    assert_eq!(rule(chained(vec![binding(0, 1)], 1)), None);
    // No binding at all.
    assert_eq!(
        rule(chained(vec![], 1)).as_deref(),
        Some("unchained-handle")
    );
    // Pointing forward.
    assert_eq!(
        rule(chained(vec![binding(1, 0)], 0)).as_deref(),
        Some("unchained-handle")
    );
    // Out of range.
    assert_eq!(
        rule(chained(vec![binding(0, 5)], 1)).as_deref(),
        Some("unchained-handle")
    );
    // Used by a call the binding does not name.
    assert_eq!(
        rule(chained(vec![binding(0, 1)], 0)).as_deref(),
        Some("unchained-handle")
    );
}

#[test]
fn structural_rules_and_write_exclusion() {
    let f = Fixture::new();
    let (_, rejections) = admit(
        vec![Candidate::new("m".into(), Err("`check` is missing".into()))],
        &f.ctx(AccessMode::ReadOnly),
    );
    assert_eq!(rejections[0].rule, "malformed");

    let mut t = good("Search for lamps and name the cheapest.", "Lumo");
    t.expected_tools.clear();
    assert_eq!(rule(t).as_deref(), Some("no-expected-tools"));
    let mut t = good("Search for lamps and name the cheapest.", "Lumo");
    t.solution[0].tool = "teleport".into();
    assert_eq!(rule(t).as_deref(), Some("unknown-tool"));

    let mut t = good("Remove the oldest lamp and name it.", "Lumo");
    t.solution[0].tool = "delete-item".into();
    // A read-only run admits no task that writes, whatever the credential.
    let rejected = rule_for(t.clone(), vec![], AccessMode::ReadOnly);
    assert_eq!(rejected.as_deref(), Some("write-excluded"));
    // So does a task whose solution gives a reading tool a statement that
    // changes data.
    let mut q = good("Search for lamps and name the cheapest.", "Lumo");
    q.solution[0]
        .arguments
        .insert("q".into(), serde_json::json!("DELETE FROM lamps"));
    let rejected = rule_for(q, vec![], AccessMode::ReadOnly);
    assert_eq!(rejected.as_deref(), Some("write-excluded"));
    let f = Fixture::new();
    let (admitted, rejections) = admit(
        vec![Candidate::new("d".into(), Ok(t))],
        &f.ctx(AccessMode::Sandbox),
    );
    assert!(rejections.is_empty(), "{rejections:?}");
    assert!(
        admitted[0].destructive,
        "the admitted task is marked destructive"
    );
}

fn task(id: &str, prompt: &str, answer: &str) -> Task {
    let mut t = good(prompt, answer);
    t.id = id.into();
    t
}

type Mutation = Box<dyn Fn(&mut Task)>;

#[test]
fn the_hash_is_stable_and_moves_with_every_task_field() {
    let config = json!({"generator": "schema-walk/1", "n_tasks": 2});
    let reordered = json!({"n_tasks": 2, "generator": "schema-walk/1"});
    let tasks = vec![
        task("t1", "Search for lamps and name the cheapest.", "Lumo"),
        task("t2", "Search for desks and name the widest.", "Broadtop"),
    ];
    let h = suite_hash(&config, 7, &tasks);
    assert_eq!(h.len(), 64);
    assert!(h.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(h, suite_hash(&config, 7, &tasks.clone()));
    assert_eq!(
        h,
        suite_hash(&reordered, 7, &tasks),
        "canonical JSON ignores key order"
    );
    assert_ne!(h, suite_hash(&config, 8, &tasks));
    assert_ne!(
        h,
        suite_hash(
            &json!({"generator": "judge-synth/1", "n_tasks": 2}),
            7,
            &tasks
        )
    );
    assert_ne!(
        h,
        suite_hash(&config, u64::MAX, &tasks),
        "a seed above 2^53 hashes"
    );

    let mutations: Vec<Mutation> = vec![
        Box::new(|t| t.id.push('x')),
        Box::new(|t| t.prompt.push('?')),
        Box::new(|t| t.expected_tools.push("get-item".into())),
        Box::new(|t| t.answer_key.push('s')),
        Box::new(|t| {
            t.check = Predicate::Substring {
                value: "Lumo".into(),
                case_insensitive: false,
            }
        }),
        Box::new(|t| t.destructive = true),
        Box::new(|t| {
            t.solution[0].arguments.insert("page".into(), json!(2));
        }),
        Box::new(|t| {
            t.handles.push(HandleBinding {
                name: "h".into(),
                produced_by: 0,
                consumed_by: 0,
            })
        }),
        Box::new(|t| t.rationale = None),
    ];
    let mut seen = BTreeSet::from([h.clone()]);
    for (i, m) in mutations.iter().enumerate() {
        let mut changed = tasks.clone();
        m(&mut changed[1]);
        let h2 = suite_hash(&config, 7, &changed);
        assert!(seen.insert(h2), "mutation {i} must change the hash");
    }
    // Order of tasks matters too.
    let mut swapped = tasks.clone();
    swapped.swap(0, 1);
    assert_ne!(h, suite_hash(&config, 7, &swapped));
}

#[test]
fn trimming_is_deterministic_by_seed_and_keeps_order() {
    let tasks: Vec<Task> = (0..20)
        .map(|i| {
            task(
                &format!("c{i}"),
                &format!("Search item {i}."),
                &format!("Name{i}"),
            )
        })
        .collect();
    let a = trim(tasks.clone(), 8, 42, None);
    let b = trim(tasks.clone(), 8, 42, None);
    assert_eq!(a, b);
    assert_eq!(a.len(), 8);
    let idx: Vec<usize> = a
        .iter()
        .map(|t| t.id[1..].parse().expect("numbered"))
        .collect();
    assert!(
        idx.windows(2).all(|w| w[0] < w[1]),
        "original order kept: {idx:?}"
    );
    assert!(
        (0..10).any(|s| trim(tasks.clone(), 8, s, None) != a),
        "another seed picks another subset"
    );
    assert_eq!(
        trim(tasks[..5].to_vec(), 8, 1, None).len(),
        5,
        "nothing to trim"
    );
}

#[test]
fn trimming_keeps_each_tools_best_task_and_meets_the_aimed_share_of_computations() {
    use fitness_shared::record::{AimedMix, TaskShape};
    let at = |id: &str, tool: &str, prompt: &str, shape: TaskShape| {
        let mut t = task(id, prompt, "x");
        t.solution[0].tool = tool.into();
        t.shape = Some(shape);
        t
    };
    let mut tasks = Vec::new();
    // `notes`: five lookups worded from a template, one composed question.
    for i in 0..5 {
        tasks.push(at(
            &format!("n{i}"),
            "notes",
            &format!("Using the server's tools, find the note_title of item {i}."),
            TaskShape::Lookup,
        ));
    }
    tasks.push(at(
        "n5",
        "notes",
        "Who wrote the note that the Tuesday meeting links to?",
        TaskShape::MultiStep,
    ));
    // `rows`: lookups a person would ask, and a pool of computations.
    for i in 0..6 {
        tasks.push(at(
            &format!("r{i}"),
            "rows",
            &format!("What colour is bike {i}?"),
            TaskShape::Lookup,
        ));
    }
    for i in 0..4 {
        tasks.push(at(
            &format!("a{i}"),
            "rows",
            &format!("How many bikes were sold in week {i}?"),
            TaskShape::Aggregate,
        ));
    }
    let aim = AimedMix::COMPOSED;
    for seed in 0..20 {
        let kept = trim(tasks.clone(), 5, seed, Some(&aim));
        let ids: Vec<&str> = kept.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(kept.len(), 5);
        assert!(
            ids.contains(&"n5"),
            "the notes tool keeps its composed question, never a templated lookup: {ids:?}"
        );
        assert!(
            !ids.iter()
                .any(|id| ["n0", "n1", "n2", "n3", "n4"].contains(id)),
            "no templated task while asked ones remain: {ids:?}"
        );
        let computing = kept
            .iter()
            .filter(|t| t.shape.is_some_and(TaskShape::computes))
            .count();
        assert!(
            computing >= aim.computed_of(5),
            "at least {} of 5 compute: {ids:?}",
            aim.computed_of(5)
        );
    }
    // Tools whose every task is templated are kept for coverage within the
    // aim's share of templated tasks (10%: one in ten), once two tools are
    // covered; the rest of the room goes to questions a person would ask.
    let mut wide = tasks.clone();
    for tool in ["config", "status", "logs", "cache"] {
        wide.push(at(
            &format!("{tool}0"),
            tool,
            &format!("Using the server's tools, find the {tool}_value the server reports."),
            TaskShape::Lookup,
        ));
    }
    for seed in 0..20 {
        let kept = trim(wide.clone(), 10, seed, Some(&aim));
        let templated = kept
            .iter()
            .filter(|t| fitness_recorder::suite::templated(&t.prompt))
            .count();
        let ids: Vec<&str> = kept.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(kept.len(), 10);
        assert!(templated <= 1, "at most one templated of ten: {ids:?}");
    }
    // Without an aim, every tool keeps its best task.
    let kept = trim(wide, 10, 3, None);
    for tool in ["config0", "status0", "logs0", "cache0"] {
        assert!(kept.iter().any(|t| t.id == tool), "{tool}");
    }
}

/// A runner scripted per prompt: `Ok(text)`, `Ok` with no usage, or an error.
enum Reply {
    Says(&'static str),
    SaysNoUsage(&'static str),
    Fails,
}

struct Scripted {
    id: ModelId,
    script: Vec<(&'static str, Reply)>,
    seen: Mutex<Vec<ChatRequest>>,
}

impl ModelClient for Scripted {
    fn id(&self) -> &ModelId {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            self.seen.lock().expect("lock").push(request.clone());
            let prompt = match &request.messages[0].content[0] {
                ContentBlock::Text { text } => text.clone(),
                other => panic!("the screen sends the prompt as text, got {other:?}"),
            };
            let reply = self
                .script
                .iter()
                .find(|(p, _)| prompt.contains(p))
                .map(|(_, r)| r)
                .expect("every prompt is scripted");
            let (text, usage) = match reply {
                Reply::Says(t) => (*t, true),
                Reply::SaysNoUsage(t) => (*t, false),
                Reply::Fails => {
                    return Err(LlmError {
                        class: LlmErrorClass::RateLimited,
                        status: Some(429),
                        message: "slow down".into(),
                        attempts: 3,
                        log: Vec::new(),
                    });
                }
            };
            Ok(text_reply(
                text,
                usage.then_some(Usage {
                    input_tokens: 100,
                    output_tokens: 20,
                    ..Usage::default()
                }),
            ))
        })
    }
}

#[tokio::test]
async fn the_null_screen_deletes_answered_candidates_and_keeps_failed_calls() {
    let runner = Scripted {
        id: "sim/fake".parse().expect("a model id"),
        script: vec![
            ("capital of France", Reply::Says("It is Paris, of course.")),
            (
                "cheapest lamp",
                Reply::SaysNoUsage("I cannot look that up."),
            ),
            ("widest desk", Reply::Fails),
        ],
        seen: Mutex::default(),
    };
    let tasks = vec![
        task("c1", "Name the capital of France.", "Paris"),
        task("c2", "Search and name the cheapest lamp.", "Lumo"),
        task("c3", "Search and name the widest desk.", "Broadtop"),
    ];
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("agent.jsonl");
    let tape = Tap::create_kind(&path, "test", vec![], "agent").expect("tape");
    let out = null_screen(tasks, &runner, &tape, 4).await;
    tape.end("done");

    assert_eq!(out.screened_out, vec!["c1".to_owned()]);
    let kept: Vec<&str> = out.kept.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(
        kept,
        ["c2", "c3"],
        "unanswered and failed candidates are kept"
    );
    assert_eq!(out.errors, 1);
    assert_eq!(out.spend.phase, "screen");
    assert_eq!(out.spend.model, "sim/fake");
    // Each call counted once: two returned, one threw, three made.
    assert_eq!(out.spend.calls, 2);
    assert_eq!(out.spend.calls_that_threw, 1);
    assert_eq!(out.spend.made(), 3);
    assert_eq!(out.spend.calls_without_usage, 1);
    assert_eq!(out.spend.usage.input_tokens, 100);

    for req in runner.seen.lock().expect("lock").iter() {
        assert!(req.tools.is_empty(), "the screen offers no tools");
        assert!(
            req.corr_id
                .as_deref()
                .is_some_and(|c| c.ends_with("::screen"))
        );
        assert!(
            req.system
                .as_deref()
                .is_some_and(|s| s.contains("no tools"))
        );
        assert_eq!(req.messages.len(), 1);
        assert_eq!(req.messages[0].role, Role::User);
    }

    let lines: Vec<Value> = std::fs::read_to_string(&path)
        .expect("tape")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect();
    let turns: Vec<&Value> = lines.iter().filter(|l| l["type"] == "turn").collect();
    assert_eq!(turns.len(), 5, "3 prompts and 2 answers: {lines:#?}");
    assert!(turns.iter().all(|t| {
        t["corr_id"]
            .as_str()
            .is_some_and(|c| c.ends_with("::screen"))
    }));
    let answer = turns
        .iter()
        .find(|t| t["role"] == "assistant" && t["corr_id"] == "c1::screen")
        .expect("the answered turn is taped");
    assert_eq!(answer["model"], "fake-1");
    assert_eq!(answer["usage"]["input_tokens"], 100);
    let errors: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "llm.error").collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["corr_id"], "c3::screen");
    assert_eq!(errors[0]["raw"]["class"], "rate_limited");
}

/// Admit `tasks` under the rules every generator but schema-walk/1 meets.
fn strict(tasks: Vec<Task>) -> (Vec<String>, Vec<(String, String)>) {
    let mut f = Fixture::new();
    f.answer_rules = true;
    let candidates = tasks
        .into_iter()
        .enumerate()
        .map(|(i, t)| Candidate::new(format!("c{i}"), Ok(t)))
        .collect();
    let (admitted, rejections) = admit(candidates, &f.ctx(AccessMode::ReadOnly));
    (
        admitted.into_iter().map(|t| t.id).collect(),
        rejections
            .into_iter()
            .map(|r| (r.candidate, r.rule.to_owned()))
            .collect(),
    )
}

fn numeric(prompt: &str, value: f64, args: Value) -> Task {
    let mut t = good(prompt, &value.to_string());
    t.check = Predicate::NumberWithin {
        value,
        tolerance: 0.0,
    };
    t.solution[0].arguments = args.as_object().cloned().unwrap_or_default();
    t
}

#[test]
fn an_answer_arithmetic_gives_without_the_server_is_derivable() {
    let (admitted, rejections) = strict(vec![
        // 19 + 53: the prompt's numbers give it.
        numeric(
            "Add 19 and 53 with the server's tool.",
            72.0,
            json!({"a": 19, "b": 53}),
        ),
        // An argument plus one.
        numeric(
            "How many lamps come after lamp 40?",
            41.0,
            json!({"q": "lamps"}),
        ),
        // The product of two arguments the prompt does not show.
        numeric(
            "Report the area the server computes.",
            96.0,
            json!({"w": 8, "h": 12}),
        ),
        // The server's own number: nothing in the task gives 1,287.
        numeric(
            "How many lamps does the catalogue hold?",
            1287.0,
            json!({"q": "lamps"}),
        ),
    ]);
    assert_eq!(admitted, vec!["c3"]);
    assert_eq!(
        rejections,
        (0..3)
            .map(|i| (format!("c{i}"), "answer-derivable".to_owned()))
            .collect::<Vec<_>>()
    );
    // schema-walk/1 suites stay as they were: the rule does not apply.
    let f = Fixture::new();
    let (admitted, _) = admit(
        vec![Candidate::new(
            "v1".into(),
            Ok(numeric(
                "Add 19 and 53 with the server's tool.",
                72.0,
                json!({"a": 19, "b": 53}),
            )),
        )],
        &f.ctx(AccessMode::ReadOnly),
    );
    assert_eq!(admitted.len(), 1);
}

#[test]
fn a_check_that_accepts_a_neighbours_answer_is_not_discriminating() {
    let (admitted, rejections) = strict(vec![
        // `Lumo` also accepts the next task's answer `Lumo Grande`.
        good("Which lamp is the cheapest?", "Lumo"),
        // `Lumo Grande` does not accept `Lumo`: it stays.
        good("Which lamp is the brightest?", "Lumo Grande"),
        // Two tasks with one answer: the later goes.
        good("Which lamp is the oldest?", "Arco"),
        {
            let mut t = good("Which lamp is the newest?", "Arco");
            t.solution[0].arguments = args(json!({"q": "new lamps"}));
            t
        },
    ]);
    assert_eq!(admitted, vec!["c1", "c2"]);
    assert_eq!(
        rejections,
        vec![
            ("c0".to_owned(), "check-not-discriminating".to_owned()),
            ("c3".to_owned(), "check-not-discriminating".to_owned()),
        ]
    );
}

#[test]
fn an_answer_read_from_an_error_is_rejected() {
    let f = Fixture::new();
    let mut c = Candidate::new("e".into(), Ok(good("Read the lamp notes.", "ENOENT")));
    c.source = Some("Error: ENOENT: no such file or directory, open '/lamps/notes.md'".into());
    let (admitted, rejections) = admit(vec![c], &f.ctx(AccessMode::ReadOnly));
    assert!(admitted.is_empty());
    assert_eq!(rejections[0].rule, "error-answer");
}

/// A judge whose every other call fails, counting what it was asked.
struct Alternating {
    id: ModelId,
    asked: Mutex<u64>,
}

impl ModelClient for Alternating {
    fn id(&self) -> &ModelId {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        _request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let n = {
                let mut asked = self.asked.lock().expect("lock");
                *asked += 1;
                *asked
            };
            if n % 2 == 0 {
                return Err(LlmError {
                    class: LlmErrorClass::Server,
                    status: Some(503),
                    message: "unavailable".into(),
                    attempts: 4,
                    log: Vec::new(),
                });
            }
            Ok(text_reply(
                "[]",
                Some(Usage {
                    input_tokens: 50,
                    output_tokens: 5,
                    ..Usage::default()
                }),
            ))
        })
    }
}

#[tokio::test]
async fn a_judge_call_that_fails_is_counted_once_against_the_spend() {
    let judge = Alternating {
        id: "sim/judge".parse().expect("an id"),
        asked: Mutex::new(0),
    };
    let tape = Tap::disabled();
    let opts = GenerateOptions::new(GeneratorId::JudgeSynth1, 8, 1);
    let config = fitness_recorder::suite::generators::judge_synth::JudgeConfig {
        max_failures_in_a_row: 3,
        ..Default::default()
    };
    let synthesis = fitness_recorder::suite::generators::judge_synth::synthesize(
        &judge,
        &[],
        None,
        8,
        &opts,
        &config,
        &tape,
    )
    .await;
    let asked = *judge.asked.lock().expect("lock");
    assert!(
        asked >= 3,
        "asked {asked} times: a success, a failure, a success"
    );
    let phase = &synthesis.phase;
    assert_eq!(
        phase.made(),
        asked,
        "every call counted, none twice: {phase:?}"
    );
    assert_eq!(phase.calls, asked.div_ceil(2), "{phase:?}");
    assert_eq!(phase.calls_that_threw, asked / 2, "{phase:?}");
    assert_eq!(synthesis.calls.made, asked);
    assert_eq!(synthesis.calls.failed, asked / 2);
}

/// A scripted model's plain text reply.
fn text_reply(text: &str, usage: Option<Usage>) -> ChatResponse {
    ChatResponse {
        content: vec![ContentBlock::Text { text: text.into() }],
        stop: StopReason::EndTurn,
        usage,
        usage_rejected: None,
        model: "fake-1".into(),
        duration_ms: 5,
        ttft_ms: None,
        attempts: 1,
        log: Vec::new(),
    }
}
