//! The name serde gives a value on the wire.

/// The string serde writes for `value`: for a unit enum value, its
/// `rename_all` spelling (`"budget_exhausted"`). `None` for a value that
/// does not serialise to a string.
pub fn wire_name<T: serde::Serialize + ?Sized>(value: &T) -> Option<String> {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => Some(s),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::wire_name;

    #[derive(serde::Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Reason {
        BudgetExhausted,
        Other(u8),
    }

    #[test]
    fn a_unit_value_has_its_serde_spelling_and_a_non_string_has_none() {
        assert_eq!(
            wire_name(&Reason::BudgetExhausted).as_deref(),
            Some("budget_exhausted")
        );
        assert_eq!(wire_name(&Reason::Other(1)), None);
    }
}
