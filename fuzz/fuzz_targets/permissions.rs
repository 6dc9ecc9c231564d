//! Permission rules: any pattern against any argument, as text and as a
//! path, and the rules' lint, never panic; a rule that allows a command
//! never allows it when it is compound, unless it allows every command
//! (`*`, with no `bash` rule after it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orcho_permissions::{Pattern, PermissionAction, RuleSet};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, argument) = text.split_once('\u{0}').unwrap_or((text, ""));
    let p = Pattern::new(pattern);
    let _ = p.matches(argument);
    let _ = p.matches_path(argument);
    let _ = p.covers(&Pattern::new(argument));
    let Ok(rules) = serde_json::from_value::<RuleSet>(serde_json::json!([
        {"permission": "bash", "pattern": pattern, "action": "allow"},
        {"permission": "write", "pattern": argument, "action": "deny"},
    ])) else {
        return;
    };
    let _ = rules.lint();
    let evaluation = rules.evaluate("bash", argument);
    let compound = ["$(", "`", "&&", "||", ";", "&", "|", ">", "<", "\n", "\r"]
        .iter()
        .any(|c| argument.trim().contains(c));
    if compound && p.as_str() == "*" {
        assert_eq!(evaluation.action, PermissionAction::Allow, "{argument:?} by {pattern:?}");
    } else if compound {
        assert_ne!(evaluation.action, PermissionAction::Allow, "{argument:?} by {pattern:?}");
    }
    let _ = rules.evaluate("write", pattern);
});
