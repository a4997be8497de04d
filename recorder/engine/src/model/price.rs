//! List prices per model, USD per million tokens: the bundled table
//! (`recorder/engine/prices.toml`, with its as-of date) and a user's override file
//! merged over it. An unknown model has no price (fail closed: it is never
//! given a default rate; the cost block then names it).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use fitness_shared::cost::Rates;
use serde::Deserialize;

use super::types::ModelId;

/// The bundled table's text.
pub const BUNDLED: &str = include_str!("../../prices.toml");

/// One model's list prices, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

impl Price {
    pub fn rates(&self) -> Rates {
        Rates {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// The date the prices were read (the override's, when it gives one).
    pub as_of: String,
    /// By `PROVIDER/MODEL`.
    #[serde(default)]
    pub models: BTreeMap<String, Price>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Override {
    as_of: Option<String>,
    #[serde(default)]
    models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The table shipped with this build.
    pub fn bundled() -> PriceTable {
        // The bundled file is checked by a unit test; a parse failure here
        // would be a build defect, so it yields an empty dated table rather
        // than a panic.
        Self::parse(BUNDLED).unwrap_or_else(|_| PriceTable {
            as_of: "unknown".to_owned(),
            models: BTreeMap::new(),
        })
    }

    pub fn parse(text: &str) -> anyhow::Result<PriceTable> {
        let table: PriceTable = toml::from_str(text).context("the price table is not valid")?;
        table.check()?;
        Ok(table)
    }

    /// The bundled table with the user's file `path` merged over it (its
    /// rows replace bundled rows of the same id; its `as_of`, if any, wins).
    pub fn load(path: &Path) -> anyhow::Result<PriceTable> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read the price file {}", path.display()))?;
        let user: Override = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid price table", path.display()))?;
        let mut table = Self::bundled();
        if let Some(as_of) = user.as_of {
            table.as_of = as_of;
        }
        table.models.extend(user.models);
        table
            .check()
            .with_context(|| format!("in {}", path.display()))?;
        Ok(table)
    }

    fn check(&self) -> anyhow::Result<()> {
        for (id, p) in &self.models {
            id.parse::<ModelId>()
                .with_context(|| format!("price row {id:?}"))?;
            for (name, v) in [
                ("input", p.input),
                ("output", p.output),
                ("cache_read", p.cache_read),
                ("cache_write", p.cache_write),
            ] {
                anyhow::ensure!(
                    v.is_finite() && v >= 0.0,
                    "price row {id:?}: {name} must be a non-negative number, got {v}"
                );
            }
        }
        Ok(())
    }

    /// The price of `id`: its exact row, else the row its dated variant
    /// (`<row>-YYYYMMDD` or `<row>-<anything>` after a dash) extends.
    pub fn price_for(&self, id: &ModelId) -> Option<&Price> {
        let key = id.to_string();
        if let Some(p) = self.models.get(&key) {
            return Some(p);
        }
        // The longest row that the id extends after a dash.
        self.models
            .iter()
            .filter(|(row, _)| {
                key.strip_prefix(row.as_str())
                    .is_some_and(|rest| rest.starts_with('-') && is_date_suffix(&rest[1..]))
            })
            .max_by_key(|(row, _)| row.len())
            .map(|(_, p)| p)
    }
}

/// `20250929`, `2025-09-29` or `latest`: a version of the same model, not
/// another model (so `gpt-4o` never prices `gpt-4o-mini`).
fn is_date_suffix(s: &str) -> bool {
    let digits: String = s.chars().filter(|c| *c != '-').collect();
    s == "latest" || (digits.len() == 8 && digits.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ModelId {
        s.parse().expect("model id")
    }

    #[test]
    fn bundled_table_parses_and_prices_sim_at_zero() {
        let t = PriceTable::parse(BUNDLED).expect("bundled table");
        assert_eq!(t.as_of, "2026-11-01");
        // Every sim profile, so a new profile cannot go unpriced.
        for (name, _) in crate::model::sim::Profile::ALL {
            let p = format!("sim/{name}");
            assert_eq!(t.price_for(&id(&p)).map(|p| p.output), Some(0.0), "{p}");
        }
        assert!(t.price_for(&id("anthropic/claude-sonnet-4-5")).is_some());
        assert!(t.price_for(&id("openai/gpt-4o")).is_some());
    }

    #[test]
    fn dated_variants_match_but_other_models_do_not() {
        let t = PriceTable::bundled();
        assert_eq!(
            t.price_for(&id("anthropic/claude-sonnet-4-5-20250929")),
            t.price_for(&id("anthropic/claude-sonnet-4-5"))
        );
        assert_eq!(
            t.price_for(&id("openai/gpt-4o-2024-08-06")),
            t.price_for(&id("openai/gpt-4o"))
        );
        assert_ne!(
            t.price_for(&id("openai/gpt-4o-mini")),
            t.price_for(&id("openai/gpt-4o"))
        );
        assert_eq!(t.price_for(&id("openai/llama3.1:8b")), None);
        assert_eq!(t.price_for(&id("sim/unknown")), None);
    }

    #[test]
    fn a_user_file_overrides_and_extends() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("p.toml");
        std::fs::write(
            &path,
            "as_of = \"2027-01-01\"\n[models.\"openai/gpt-4o\"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.5\ncache_write = 1.0\n\
             [models.\"openai/llama3.1:8b\"]\ninput = 0.0\noutput = 0.0\ncache_read = 0.0\ncache_write = 0.0\n",
        )
        .expect("write");
        let t = PriceTable::load(&path).expect("loads");
        assert_eq!(t.as_of, "2027-01-01");
        assert_eq!(
            t.price_for(&id("openai/gpt-4o")).map(|p| p.input),
            Some(1.0)
        );
        assert!(t.price_for(&id("openai/llama3.1:8b")).is_some());
        assert!(t.price_for(&id("anthropic/claude-haiku-4-5")).is_some());
        std::fs::write(&path, "[models.\"openai/x\"]\ninput = -1.0\noutput = 0.0\ncache_read = 0.0\ncache_write = 0.0\n").expect("write");
        let err = format!("{:#}", PriceTable::load(&path).expect_err("negative price"));
        assert!(err.contains("non-negative"), "{err}");
    }
}
