//! Fixed in-code data the demo servers answer from.
//!
//! [`CAPITALS`] is shared with the `sim/*` offline agents: the `trivia`
//! server's `capital_of` answers exactly these facts, and a sim agent with no
//! tools knows exactly these facts, so the generation-time null screen deletes
//! every `capital_of` task. Change both together (sim must read this table).

/// Country name → capital city: the facts a tool-less sim agent knows.
pub const CAPITALS: &[(&str, &str)] = &[
    ("France", "Paris"),
    ("Germany", "Berlin"),
    ("Italy", "Rome"),
    ("Spain", "Madrid"),
    ("Japan", "Tokyo"),
    ("Canada", "Ottawa"),
    ("Australia", "Canberra"),
    ("Brazil", "Brasilia"),
    ("Egypt", "Cairo"),
    ("India", "New Delhi"),
    ("Kenya", "Nairobi"),
    ("Peru", "Lima"),
];

/// The capital of `country` in [`CAPITALS`] (exact, case-insensitive name).
pub fn capital_of(country: &str) -> Option<&'static str> {
    CAPITALS
        .iter()
        .find(|(c, _)| c.eq_ignore_ascii_case(country))
        .map(|(_, capital)| *capital)
}

/// One row of the `good` server's country table. No country here is in
/// [`CAPITALS`], so the no-tools null arm cannot answer `good`'s tasks.
pub struct Country {
    pub code: &'static str,
    pub name: &'static str,
    pub capital: &'static str,
    pub population: u64,
    pub currency: &'static str,
    pub calling_code: u32,
    pub area_km2: u64,
}

const fn c(
    code: &'static str,
    name: &'static str,
    capital: &'static str,
    population: u64,
    currency: &'static str,
    calling_code: u32,
    area_km2: u64,
) -> Country {
    Country {
        code,
        name,
        capital,
        population,
        currency,
        calling_code,
        area_km2,
    }
}

/// Twenty countries with distinct currencies, populations and areas.
pub const COUNTRIES: &[Country] = &[
    c(
        "US",
        "United States",
        "Washington, D.C.",
        334_900_000,
        "USD",
        1,
        9_833_520,
    ),
    c(
        "MX",
        "Mexico",
        "Mexico City",
        128_500_000,
        "MXN",
        52,
        1_964_375,
    ),
    c(
        "AR",
        "Argentina",
        "Buenos Aires",
        46_200_000,
        "ARS",
        54,
        2_780_400,
    ),
    c("CL", "Chile", "Santiago", 19_600_000, "CLP", 56, 756_102),
    c("CO", "Colombia", "Bogota", 52_200_000, "COP", 57, 1_141_748),
    c(
        "GB",
        "United Kingdom",
        "London",
        68_300_000,
        "GBP",
        44,
        242_495,
    ),
    c(
        "NL",
        "Netherlands",
        "Amsterdam",
        17_900_000,
        "EUR",
        31,
        41_850,
    ),
    c("SE", "Sweden", "Stockholm", 10_500_000, "SEK", 46, 450_295),
    c("NO", "Norway", "Oslo", 5_500_000, "NOK", 47, 385_207),
    c("PL", "Poland", "Warsaw", 36_700_000, "PLN", 48, 312_696),
    c("CZ", "Czechia", "Prague", 10_900_000, "CZK", 420, 78_871),
    c("HU", "Hungary", "Budapest", 9_600_000, "HUF", 36, 93_030),
    c("TR", "Turkey", "Ankara", 85_300_000, "TRY", 90, 783_562),
    c("NG", "Nigeria", "Abuja", 223_800_000, "NGN", 234, 923_768),
    c(
        "ZA",
        "South Africa",
        "Pretoria",
        60_400_000,
        "ZAR",
        27,
        1_221_037,
    ),
    c("KR", "South Korea", "Seoul", 51_700_000, "KRW", 82, 100_210),
    c("TH", "Thailand", "Bangkok", 71_800_000, "THB", 66, 513_120),
    c("VN", "Vietnam", "Hanoi", 98_900_000, "VND", 84, 331_212),
    c(
        "ID",
        "Indonesia",
        "Jakarta",
        277_500_000,
        "IDR",
        62,
        1_904_569,
    ),
    c(
        "NZ",
        "New Zealand",
        "Wellington",
        5_200_000,
        "NZD",
        64,
        268_021,
    ),
];

/// A fixed corpus for `good`'s `word_stats`, one passage per index.
pub const CORPUS: &[&str] = &[
    "The quick brown fox jumps over the lazy dog while the farmer naps beneath an old walnut tree.",
    "Sphinx of black quartz, judge my vow, said the archivist to the bewildered cartographer.",
    "A lighthouse keeper counted gulls every morning and wrote the totals in a salt-stained ledger.",
    "Seven violinists rehearsed the overture until the conductor finally lowered his trembling baton.",
    "Glaciers carve valleys slowly, grinding granite into flour that clouds the meltwater rivers.",
    "The baker kneaded dough before dawn, humming a waltz her grandmother had taught her.",
    "Astronomers catalogued a faint comet drifting past Jupiter on an unusually elongated orbit.",
    "Beekeepers in the highlands harvest heather honey late in the summer when moors turn purple.",
    "A clockmaker repaired the cathedral mechanism, replacing every brass gear by hand.",
    "Marathon runners crossed the bridge at sunrise as drummers kept a steady rhythm on the quay.",
    "The librarian shelved atlases, encyclopedias and a single forgotten manuscript about lichens.",
    "Fishermen mended nets on the pier, trading stories about the storm of the previous winter.",
    "An engineer tested the suspension cables with ultrasound, searching for hidden corrosion.",
    "Orchard workers picked quinces and medlars, stacking the crates beside the cider press.",
    "The chess tournament ended in a draw after the grandmaster declined a tempting knight sacrifice.",
    "Volcanologists sampled sulphurous vapour from a fumarole high on the crater rim.",
];

/// Fifty names for `canary`'s fixed inventory (`list_items`), in order.
pub const INVENTORY: &[&str] = &[
    "anchor",
    "beacon",
    "bobbin",
    "bracket",
    "buckle",
    "caliper",
    "canister",
    "carabiner",
    "chisel",
    "clamp",
    "compass",
    "crank",
    "dowel",
    "easel",
    "ferrule",
    "flange",
    "funnel",
    "gasket",
    "gimlet",
    "grommet",
    "hasp",
    "hinge",
    "jigsaw",
    "kettle",
    "ladle",
    "lantern",
    "mallet",
    "mortar",
    "nozzle",
    "padlock",
    "pestle",
    "plumb",
    "pulley",
    "ratchet",
    "rivet",
    "sextant",
    "shackle",
    "spindle",
    "sprocket",
    "stencil",
    "swivel",
    "tether",
    "thimble",
    "toggle",
    "trowel",
    "valve",
    "wedge",
    "whisk",
    "winch",
    "zipper",
];
