//! `good`: seven read-only tools with rich argument spaces whose answers do
//! not echo their arguments, so a schema walk finds many distinct tasks and a
//! random call rarely reproduces another task's answer.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, Tool};
use serde_json::json;

use super::args::{choice, enum_schema, int, int_schema, object, significant, string};
use super::facts::{CORPUS, COUNTRIES};
use super::kit::{read_only, text, tool, tool_error};

pub const COUNTRY_FIELDS: &[&str] = &[
    "capital",
    "population",
    "currency",
    "calling_code",
    "area_km2",
];

/// Length units and their size in metres.
pub const LENGTH_UNITS: &[(&str, f64)] = &[
    ("micrometre", 1e-6),
    ("millimetre", 1e-3),
    ("centimetre", 1e-2),
    ("decimetre", 0.1),
    ("metre", 1.0),
    ("kilometre", 1e3),
    ("inch", 0.0254),
    ("hand", 0.1016),
    ("foot", 0.3048),
    ("yard", 0.9144),
    ("fathom", 1.8288),
    ("rod", 5.0292),
    ("chain", 20.1168),
    ("furlong", 201.168),
    ("mile", 1609.344),
    ("nautical_mile", 1852.0),
    ("league", 4828.032),
];

pub const ORDER_FIELDS: &[&str] = &["customer", "total", "tracking_number", "placed_on", "sku"];
pub const FIRST_ORDER: i64 = 1001;
pub const LAST_ORDER: i64 = 1030;

const CUSTOMERS: &[&str] = &[
    "Ada Okafor",
    "Bruno Lindqvist",
    "Chiara Bellini",
    "Dmitri Volkov",
    "Elif Yilmaz",
    "Farid Haddad",
    "Greta Nilsen",
    "Hiro Tanaka",
    "Ines Duarte",
    "Jonas Weber",
    "Kavya Rao",
    "Liam Murphy",
    "Mei Chen",
    "Nadia Petrova",
    "Oscar Alvarez",
    "Priya Nair",
    "Quentin Roux",
    "Rosa Jimenez",
    "Sven Dahl",
    "Tomasz Nowak",
    "Uma Patel",
    "Victor Hugo Sousa",
    "Wanjiru Kamau",
    "Xavier Dubois",
    "Yara Haddad-Silva",
    "Zoltan Kovacs",
    "Amara Diallo",
    "Bjorn Eriksen",
    "Camila Reyes",
    "Dario Fontana",
];

const WORD_STATS: &[&str] = &[
    "word_count",
    "char_count",
    "vowel_count",
    "longest_word",
    "last_word",
];
const HASHES: &[&str] = &["fnv1a32", "fnv1a64", "djb2", "sdbm", "adler32", "crc32"];
const PRIME_QUERIES: &[&str] = &["nth_prime", "next_prime_after", "prime_count_upto"];
pub const PRIME_MAX_N: i64 = 2000;

/// CSS colour names and their RGB values.
pub const COLOURS: &[(&str, [u8; 3])] = &[
    ("coral", [255, 127, 80]),
    ("crimson", [220, 20, 60]),
    ("darkorchid", [153, 50, 204]),
    ("firebrick", [178, 34, 34]),
    ("gold", [255, 215, 0]),
    ("indigo", [75, 0, 130]),
    ("khaki", [240, 230, 140]),
    ("lavender", [230, 230, 250]),
    ("maroon", [128, 0, 0]),
    ("navy", [0, 0, 128]),
    ("olive", [128, 128, 0]),
    ("orchid", [218, 112, 214]),
    ("peru", [205, 133, 63]),
    ("plum", [221, 160, 221]),
    ("salmon", [250, 128, 114]),
    ("sienna", [160, 82, 45]),
    ("teal", [0, 128, 128]),
    ("tomato", [255, 99, 71]),
];
const COLOUR_FORMATS: &[&str] = &["hex", "rgb", "hsl"];

pub fn tools() -> Vec<Tool> {
    let codes: Vec<&str> = COUNTRIES.iter().map(|c| c.code).collect();
    let units: Vec<&str> = LENGTH_UNITS.iter().map(|(u, _)| *u).collect();
    let colours: Vec<&str> = COLOURS.iter().map(|(c, _)| *c).collect();
    let ro = read_only();
    vec![
        tool(json!({
            "name": "country_facts",
            "description": "Look up one fact about a country by its ISO 3166-1 alpha-2 code.",
            "inputSchema": object(&[
                ("code", enum_schema(&codes, "ISO 3166-1 alpha-2 country code.")),
                ("field", enum_schema(COUNTRY_FIELDS, "Which fact to return.")),
            ]),
            "annotations": ro,
        })),
        tool(json!({
            "name": "convert_length",
            "description": "Convert a whole-number length between units; six significant digits.",
            "inputSchema": object(&[
                ("value", int_schema(1, 5000, "The length to convert, in `from` units.")),
                ("from", enum_schema(&units, "The unit of `value`.")),
                ("to", enum_schema(&units, "The unit to convert into.")),
            ]),
            "annotations": ro,
        })),
        tool(json!({
            "name": "order_lookup",
            "description": "Read one field of an order in the shop's order book.",
            "inputSchema": object(&[
                ("order_id", int_schema(FIRST_ORDER, LAST_ORDER, "The order number.")),
                ("field", enum_schema(ORDER_FIELDS, "Which field of the order to return.")),
            ]),
            "annotations": ro,
        })),
        tool(json!({
            "name": "word_stats",
            "description": "A statistic of one passage of the built-in corpus, chosen by index.",
            "inputSchema": object(&[
                ("passage", int_schema(0, CORPUS.len() as i64 - 1, "Index of the passage.")),
                ("stat", enum_schema(WORD_STATS, "Which statistic to compute.")),
            ]),
            "annotations": ro,
        })),
        tool(json!({
            "name": "hash_text",
            "description": "A stable non-cryptographic hash of a UTF-8 string, in lowercase hex.",
            "inputSchema": object(&[
                ("text", json!({"type": "string", "description": "The text to hash.", "minLength": 1, "maxLength": 200})),
                ("algorithm", enum_schema(HASHES, "The hash function.")),
            ]),
            "annotations": ro,
        })),
        tool(json!({
            "name": "prime_info",
            "description": "Answer a question about prime numbers for a given n.",
            "inputSchema": object(&[
                ("n", int_schema(1, PRIME_MAX_N, "The number the question is about.")),
                ("query", enum_schema(PRIME_QUERIES, "nth_prime: the n-th prime; next_prime_after: the smallest prime greater than n; prime_count_upto: how many primes are at most n.")),
            ]),
            "annotations": ro,
        })),
        tool(json!({
            "name": "color_info",
            "description": "The value of a named CSS colour in a chosen notation.",
            "inputSchema": object(&[
                ("name", enum_schema(&colours, "A CSS colour name.")),
                ("format", enum_schema(COLOUR_FORMATS, "hex, rgb or hsl notation.")),
            ]),
            "annotations": ro,
        })),
    ]
}

pub fn call(tool: &str, args: &JsonObject) -> Result<CallToolResult, ErrorData> {
    Ok(match answer(tool, args) {
        Ok(s) => text(s),
        Err(e) => tool_error(e),
    })
}

fn answer(tool: &str, args: &JsonObject) -> Result<String, String> {
    match tool {
        "country_facts" => {
            let codes: Vec<&str> = COUNTRIES.iter().map(|c| c.code).collect();
            let code = choice(args, "code", &codes)?;
            let field = choice(args, "field", COUNTRY_FIELDS)?;
            let c = COUNTRIES
                .iter()
                .find(|c| c.code == code)
                .ok_or("unknown country")?;
            Ok(match field {
                "capital" => format!("The capital of {} is {}.", c.name, c.capital),
                "population" => format!("{} has a population of about {}.", c.name, c.population),
                "currency" => format!("{} uses the currency {}.", c.name, c.currency),
                "calling_code" => format!(
                    "The international calling code of {} is +{}.",
                    c.name, c.calling_code
                ),
                _ => format!("{} covers {} square kilometres.", c.name, c.area_km2),
            })
        }
        "convert_length" => {
            let units: Vec<&str> = LENGTH_UNITS.iter().map(|(u, _)| *u).collect();
            let value = int(args, "value", 1, 5000)?;
            let from = choice(args, "from", &units)?;
            let to = choice(args, "to", &units)?;
            Ok(format!(
                "{} {to}",
                significant(convert(value as f64, from, to))
            ))
        }
        "order_lookup" => {
            let id = int(args, "order_id", FIRST_ORDER, LAST_ORDER)?;
            let field = choice(args, "field", ORDER_FIELDS)?;
            Ok(order_field(id, field))
        }
        "word_stats" => {
            let i = int(args, "passage", 0, CORPUS.len() as i64 - 1)?;
            let stat = choice(args, "stat", WORD_STATS)?;
            Ok(word_stat(CORPUS[i as usize], stat))
        }
        "hash_text" => {
            let s = string(args, "text")?;
            if s.is_empty() {
                return Err("`text` must not be empty".to_owned());
            }
            let algorithm = choice(args, "algorithm", HASHES)?;
            Ok(hash(s.as_bytes(), algorithm))
        }
        "prime_info" => {
            let n = int(args, "n", 1, PRIME_MAX_N)? as u64;
            let query = choice(args, "query", PRIME_QUERIES)?;
            Ok(match query {
                "nth_prime" => format!("The requested prime is {}.", nth_prime(n)),
                "next_prime_after" => format!("The next prime is {}.", next_prime_after(n)),
                _ => format!("There are {} such primes.", prime_count_upto(n)),
            })
        }
        "color_info" => {
            let names: Vec<&str> = COLOURS.iter().map(|(c, _)| *c).collect();
            let name = choice(args, "name", &names)?;
            let format = choice(args, "format", COLOUR_FORMATS)?;
            let [r, g, b] = COLOURS
                .iter()
                .find(|(c, _)| *c == name)
                .map(|(_, rgb)| *rgb)
                .ok_or("unknown colour")?;
            Ok(match format {
                "hex" => format!("#{r:02X}{g:02X}{b:02X}"),
                "rgb" => format!("rgb({r}, {g}, {b})"),
                _ => {
                    let (h, s, l) = hsl(r, g, b);
                    format!("hsl({h}, {s}%, {l}%)")
                }
            })
        }
        other => Err(format!("unknown tool `{other}`")),
    }
}

/// `value` in `from` units, expressed in `to` units.
pub fn convert(value: f64, from: &str, to: &str) -> f64 {
    let metres = |u: &str| {
        LENGTH_UNITS
            .iter()
            .find(|(name, _)| *name == u)
            .map_or(f64::NAN, |(_, m)| *m)
    };
    value * metres(from) / metres(to)
}

/// One field of the fixed order book (orders 1001..=1030).
pub fn order_field(id: i64, field: &str) -> String {
    let k = (id - FIRST_ORDER) as u64;
    match field {
        "customer" => format!("Order {id} was placed by {}.", CUSTOMERS[k as usize]),
        "total" => {
            // 7919 is coprime to 90000: every order has a different total.
            let cents = (id as u64 * 7919) % 90_000 + 1_000;
            format!("Order total: EUR {}.{:02}", cents / 100, cents % 100)
        }
        "tracking_number" => {
            let mixed = (id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 24;
            format!("Tracking number: TRK{:010}", mixed % 10_000_000_000)
        }
        "placed_on" => {
            // 37 is coprime to 300: every order has a different date.
            let day = (id as u64 * 37) % 300;
            let (month, dom) = month_day_2026(day as u32);
            format!("Placed on 2026-{month:02}-{dom:02}.")
        }
        _ => {
            let mixed = (id as u64).wrapping_mul(2_654_435_761) % 1_000_000;
            format!("SKU: KT-{mixed:06}")
        }
    }
}

/// Day-of-year (0-based) in 2026 to (month, day).
fn month_day_2026(mut day: u32) -> (u32, u32) {
    const DAYS: [u32; 12] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    for (i, len) in DAYS.iter().enumerate() {
        if day < *len {
            return (i as u32 + 1, day + 1);
        }
        day -= len;
    }
    (12, 31)
}

fn words(passage: &str) -> Vec<&str> {
    passage
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .filter(|w| !w.is_empty())
        .collect()
}

pub fn word_stat(passage: &str, stat: &str) -> String {
    let words = words(passage);
    match stat {
        "word_count" => format!("The passage has {} words.", words.len()),
        "char_count" => format!("The passage has {} characters.", passage.chars().count()),
        "vowel_count" => format!(
            "The passage has {} vowels.",
            passage
                .chars()
                .filter(|c| "aeiouAEIOU".contains(*c))
                .count()
        ),
        "longest_word" => {
            let longest = words.iter().fold("", |best, w| {
                if w.chars().count() > best.chars().count() {
                    w
                } else {
                    best
                }
            });
            format!("The longest word is \"{longest}\".")
        }
        _ => format!(
            "The last word is \"{}\".",
            words.last().copied().unwrap_or("")
        ),
    }
}

pub fn hash(bytes: &[u8], algorithm: &str) -> String {
    match algorithm {
        "fnv1a32" => {
            let h = bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
                (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
            });
            format!("{h:08x}")
        }
        "fnv1a64" => {
            let h = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
                (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
            });
            format!("{h:016x}")
        }
        "djb2" => {
            let h = bytes.iter().fold(5381_u32, |h, b| {
                h.wrapping_mul(33).wrapping_add(u32::from(*b))
            });
            format!("{h:08x}")
        }
        "sdbm" => {
            let h = bytes.iter().fold(0_u32, |h, b| {
                u32::from(*b)
                    .wrapping_add(h << 6)
                    .wrapping_add(h << 16)
                    .wrapping_sub(h)
            });
            format!("{h:08x}")
        }
        "adler32" => {
            let (a, b) = bytes.iter().fold((1_u32, 0_u32), |(a, b), x| {
                let a = (a + u32::from(*x)) % 65_521;
                (a, (b + a) % 65_521)
            });
            format!("{:08x}", (b << 16) | a)
        }
        _ => format!("{:08x}", crc32(bytes)),
    }
}

/// CRC-32 (IEEE 802.3, reflected), as in zip and PNG.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFF_u32;
    for b in bytes {
        crc ^= u32::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn is_prime(n: u64) -> bool {
    n >= 2
        && (2..)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
}

pub fn nth_prime(n: u64) -> u64 {
    (2..)
        .filter(|p| is_prime(*p))
        .nth(n as usize - 1)
        .unwrap_or(0)
}

fn next_prime_after(n: u64) -> u64 {
    (n + 1..).find(|p| is_prime(*p)).unwrap_or(0)
}

fn prime_count_upto(n: u64) -> usize {
    (2..=n).filter(|p| is_prime(*p)).count()
}

/// RGB to HSL, rounded to whole degrees and percent.
fn hsl(r: u8, g: u8, b: u8) -> (i64, i64, i64) {
    let (r, g, b) = (
        f64::from(r) / 255.0,
        f64::from(g) / 255.0,
        f64::from(b) / 255.0,
    );
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let l = (max + min) / 2.0;
    let d = max - min;
    if d == 0.0 {
        return (0, 0, (l * 100.0).round() as i64);
    }
    let s = d / (1.0 - (2.0 * l - 1.0).abs());
    let h = if max == r {
        60.0 * (((g - b) / d).rem_euclid(6.0))
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    (
        h.round() as i64,
        (s * 100.0).round() as i64,
        (l * 100.0).round() as i64,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(hash(b"hello", "crc32"), "3610a686");
        assert_eq!(hash(b"hello", "fnv1a32"), "4f9f2cab");
        assert_eq!(hash(b"Wikipedia", "adler32"), "11e60398");
        assert_eq!(nth_prime(1), 2);
        assert_eq!(nth_prime(2000), 17389);
        assert_eq!(prime_count_upto(100), 25);
        assert_eq!(next_prime_after(13), 17);
        assert_eq!(hsl(255, 127, 80), (16, 100, 66));
        assert_eq!(significant(convert(1.0, "mile", "kilometre")), "1.60934");
        assert_eq!(month_day_2026(0), (1, 1));
        assert_eq!(month_day_2026(59), (3, 1));
    }

    #[test]
    fn order_book_fields_are_distinct_across_orders() {
        for field in ORDER_FIELDS {
            let values: std::collections::BTreeSet<String> = (FIRST_ORDER..=LAST_ORDER)
                .map(|id| order_field(id, field))
                .collect();
            assert_eq!(values.len(), 30, "{field}");
        }
    }

    #[test]
    fn country_facts_are_distinct_per_field() {
        let distinct = |f: &dyn Fn(&super::super::facts::Country) -> String| {
            COUNTRIES
                .iter()
                .map(f)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        assert_eq!(distinct(&|c| c.capital.to_owned()), COUNTRIES.len());
        assert_eq!(distinct(&|c| c.population.to_string()), COUNTRIES.len());
        assert_eq!(distinct(&|c| c.currency.to_owned()), COUNTRIES.len());
        assert_eq!(distinct(&|c| c.calling_code.to_string()), COUNTRIES.len());
        assert_eq!(distinct(&|c| c.area_km2.to_string()), COUNTRIES.len());
    }
}
