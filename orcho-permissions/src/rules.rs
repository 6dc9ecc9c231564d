//! Rules, rule sets and presets: how a request is evaluated.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::{Pattern, Permission, PermissionAction, pattern::Mode};

/// One rule: requests for `permission` whose argument matches `pattern` get
/// `action`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Rule {
    /// The permission it applies to (`*` for all).
    pub permission: Permission,
    /// The pattern the argument must match.
    pub pattern: Pattern,
    /// What a matching request gets.
    pub action: PermissionAction,
}

impl Rule {
    /// A rule.
    pub fn new(permission: Permission, pattern: &str, action: PermissionAction) -> Self {
        Self {
            permission,
            pattern: Pattern::new(pattern),
            action,
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} `{}` → {}",
            self.permission, self.pattern, self.action
        )
    }
}

/// Why a request got its action.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Reason {
    /// The last matching rule decided.
    Rule {
        /// Its 0-based position in the rule set.
        index: usize,
        /// The rule.
        rule: Rule,
    },
    /// No rule matched, so the request is denied.
    NoRule,
    /// A compound shell command that the last matching rule would have
    /// allowed; it is asked about instead.
    Compound {
        /// The construct that makes it compound, for example `;` or `$(`.
        construct: &'static str,
        /// The rule that would have allowed it.
        index: usize,
        /// The rule.
        rule: Rule,
    },
}

/// The answer to one permission request: the action and why.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Evaluation {
    /// What to do.
    pub action: PermissionAction,
    /// Why.
    pub reason: Reason,
}

impl Evaluation {
    /// One line a host can show to explain the outcome.
    pub fn explain(&self) -> String {
        match &self.reason {
            Reason::Rule { index, rule } => {
                format!("{} by rule {} ({rule})", self.action, index + 1)
            }
            Reason::NoRule => "deny: no rule matches, and unmatched requests are denied".to_owned(),
            Reason::Compound {
                construct,
                index,
                rule,
            } => format!(
                "ask: the command is compound (`{construct}`), and rule {} ({rule}) only allows \
                 single commands (a last rule `bash` `*` → allow allows compound ones too)",
                index + 1
            ),
        }
    }
}

/// A rule that can never decide, found by [`RuleSet::lint`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShadowedRule {
    /// The 0-based index of the rule that never decides.
    pub index: usize,
    /// The 0-based index of the later rule that always matches first.
    pub shadowed_by: usize,
}

impl ShadowedRule {
    /// A message naming both rules (1-based, as a person counts).
    pub fn message(&self, rules: &RuleSet) -> String {
        let rule = &rules.rules[self.index];
        let by = &rules.rules[self.shadowed_by];
        format!(
            "rule {} ({rule}) never decides: the later rule {} ({by}) matches everything it matches",
            self.index + 1,
            self.shadowed_by + 1
        )
    }
}

/// An ordered list of permission rules.
///
/// A [`RuleSet`] is a list of [`Rule`]s: (permission, pattern, action). The
/// precedence model is one rule, documented and tested:
///
/// - **the last matching rule wins** (write general rules first, exceptions
///   after them);
/// - **a request that matches no rule is denied**;
/// - for `bash`, a **compound command** — one that chains or substitutes
///   commands or redirects output (`;`, `&`, `&&`, `|`, `||`, `` ` ``, `$(`,
///   `>`, `<`, or a line break) — is never *allowed* by a rule: an allow
///   becomes `ask`, while `ask` and `deny` stay. So `ls; rm -rf x` is not
///   allowed by an `ls*` rule. The check is conservative: a `;` inside quotes
///   also makes a command compound (it is asked about, never run silently).
///   The one exception is an allow of every command: a `*` pattern with no
///   later `bash` rule allows each part of a compound command on its own,
///   so it allows the whole.
///
/// Patterns match the whole argument, case-sensitively (see [`Pattern`]):
///
/// - for `bash`, the command line with surrounding whitespace trimmed, where
///   `*` is any run of characters and `?` one character; a pattern ending in
///   ` *` also matches the bare command (`git status *` matches
///   `git status`);
/// - for `read`, `write` and `edit`, the path (relative to the checkout when
///   it is inside it), with glob rules: `*` within one segment, `**` across
///   segments, and `*` alone for every path;
/// - for every other permission (`glob`, `grep`, MCP tools …), the argument
///   as text, like `bash`.
///
/// A rule's permission may be a glob too: `*` matches every permission,
/// `mcp__*` every MCP tool.
///
/// [`RuleSet::evaluate`] returns the action *and* the reason, including the
/// rule that decided, so a host can explain. [`RuleSet::lint`] reports rules
/// that can never decide because a later rule always matches whatever they
/// match.
///
/// ```
/// use orcho_permissions::{PermissionAction, RuleSet};
///
/// let rules = RuleSet::read_only();
/// assert_eq!(rules.evaluate("bash", "git status").action, PermissionAction::Allow);
/// assert_eq!(rules.evaluate("bash", "ls && rm -rf target").action, PermissionAction::Ask);
/// assert_eq!(rules.evaluate("write", "src/lib.rs").action, PermissionAction::Deny);
/// println!("{}", rules.evaluate("bash", "ls; rm -rf x").explain());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RuleSet {
    rules: Vec<Rule>,
}

impl RuleSet {
    /// A rule set.
    pub fn new(rules: impl IntoIterator<Item = Rule>) -> Self {
        Self {
            rules: rules.into_iter().collect(),
        }
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Appends a rule (it takes precedence over every earlier one).
    pub fn push(&mut self, rule: Rule) {
        self.rules.push(rule);
    }

    /// The built-in preset for read-only sessions: writes and edits denied,
    /// dispatch denied (no recursion), reads, globs and greps allowed (reads
    /// of absolute paths, outside the checkout, asked about), shell
    /// commands asked about except a list of known-safe read commands, which
    /// are allowed as single commands whose arguments stay in the checkout
    /// (an absolute path, `~` or `..` asks, as a Read outside it does).
    pub fn read_only() -> Self {
        use PermissionAction::{Allow, Ask, Deny};
        let mut rules = vec![
            Rule::new(Permission::ANY, "*", Deny),
            Rule::new(Permission::READ, "*", Allow),
            Rule::new(Permission::GLOB, "*", Allow),
            Rule::new(Permission::GREP, "*", Allow),
            Rule::new(Permission::BASH, "*", Ask),
        ];
        for safe in SAFE_COMMANDS {
            rules.push(Rule::new(Permission::BASH, &format!("{safe} *"), Allow));
        }
        // Options of otherwise safe commands that write files or run
        // programs. `tree -o FILE` writes its listing and `file -C` compiles
        // a magic file; short options may be bundled (`tree -ao x`), so any
        // option before an `o` (`C`) is asked about.
        for risky in [
            "*--output*",
            "*--pre*",
            "*--ext-diff*",
            "*--exec*",
            "*--upload-pack*",
            "tree *-*o*",
            "file *-*C*",
            "file *--compile*",
            // A read outside the checkout is asked about whichever way it
            // is made: the shell's `cat /etc/passwd` as the Read tool's.
            // An absolute path, the home directory or a parent directory
            // as an argument (or an option's value) asks.
            "* /*",
            "*=/*",
            "* ~*",
            "*=~*",
            "* ..",
            "* ../*",
            "*=../*",
        ] {
            rules.push(Rule::new(Permission::BASH, risky, Ask));
        }
        rules.extend([
            Rule::new(Permission::WRITE, "*", Deny),
            Rule::new(Permission::EDIT, "*", Deny),
            Rule::new(Permission::DISPATCH, "*", Deny),
            // Outside the checkout (an absolute path, once a host made paths
            // inside it relative): home directories hold keys and tokens.
            Rule::new(Permission::READ, "/**", Ask),
        ]);
        Self { rules }
    }

    /// The action for a request of `permission` on `argument` (a path, a
    /// glob, a search, or for `bash` the command line), and why.
    pub fn evaluate(&self, permission: &str, argument: &str) -> Evaluation {
        let argument = if permission == Permission::BASH.as_str() {
            argument.trim()
        } else {
            argument
        };
        let mode = if Permission::names_paths(permission) {
            Mode::Path
        } else {
            Mode::Plain
        };
        let Some((index, rule)) = self.rules.iter().enumerate().rev().find(|(_, r)| {
            r.permission.matches(permission) && r.pattern.matches_in(mode, argument)
        }) else {
            return Evaluation {
                action: PermissionAction::Deny,
                reason: Reason::NoRule,
            };
        };
        if rule.action == PermissionAction::Allow
            && permission == Permission::BASH.as_str()
            && !self.allows_every_command(index)
            && let Some(construct) = compound_construct(argument)
        {
            return Evaluation {
                action: PermissionAction::Ask,
                reason: Reason::Compound {
                    construct,
                    index,
                    rule: rule.clone(),
                },
            };
        }
        Evaluation {
            action: rule.action,
            reason: Reason::Rule {
                index,
                rule: rule.clone(),
            },
        }
    }

    /// Whether the rule at `index` allows every shell command with nothing
    /// after it to say otherwise: a `*` pattern, and no later rule for
    /// `bash`. Every part of a compound command is then allowed on its own,
    /// so the whole is too (`sh -c 'echo x >> f'` under `bash *` → allow).
    fn allows_every_command(&self, index: usize) -> bool {
        let Some(rule) = self.rules.get(index) else {
            return false;
        };
        rule.action == PermissionAction::Allow
            && rule.pattern.as_str() == "*"
            && !self.rules[index + 1..]
                .iter()
                .any(|later| later.permission.matches(Permission::BASH.as_str()))
    }

    /// Rules that can never decide because a later rule matches everything
    /// they match (whatever its action), in order.
    pub fn lint(&self) -> Vec<ShadowedRule> {
        let mut out = Vec::new();
        for (index, rule) in self.rules.iter().enumerate() {
            // The readings the rule's pattern is matched with: a glob
            // permission may name paths and text alike.
            let modes: &[Mode] = if rule.permission.is_glob() {
                &[Mode::Plain, Mode::Path]
            } else if Permission::names_paths(rule.permission.as_str()) {
                &[Mode::Path]
            } else {
                &[Mode::Plain]
            };
            let later = self.rules[index + 1..].iter().position(|later| {
                later.permission.covers(&rule.permission)
                    && modes
                        .iter()
                        .all(|mode| later.pattern.covers_in(*mode, &rule.pattern))
            });
            if let Some(offset) = later {
                out.push(ShadowedRule {
                    index,
                    shadowed_by: index + 1 + offset,
                });
            }
        }
        out
    }
}

/// Commands that only read, allowed by [`RuleSet::read_only`] as single
/// commands (with any arguments, except the risky options it asks about).
pub const SAFE_COMMANDS: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "pwd",
    "tree",
    "stat",
    "file",
    "du",
    "which",
    "rg",
    "grep",
    "git status",
    "git log",
    "git diff",
    "git show",
    "git blame",
    "git ls-files",
    "git rev-parse",
    "orcho status",
];

/// The first construct that makes a command line compound, if any.
fn compound_construct(command: &str) -> Option<&'static str> {
    const CONSTRUCTS: [(&str, &str); 9] = [
        ("$(", "$("),
        ("`", "`"),
        ("&&", "&&"),
        ("||", "||"),
        (";", ";"),
        ("&", "&"),
        ("|", "|"),
        (">", ">"),
        ("<", "<"),
    ];
    if command.contains(['\n', '\r']) {
        return Some("line break");
    }
    CONSTRUCTS
        .iter()
        .filter_map(|(needle, name)| command.find(needle).map(|at| (at, *name)))
        .min_by_key(|(at, name)| (*at, std::cmp::Reverse(name.len())))
        .map(|(_, name)| name)
}

/// A named set of rules a profile can select instead of listing rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum PermissionPreset {
    /// [`RuleSet::read_only`].
    ReadOnly,
}

impl PermissionPreset {
    /// The rules of the preset.
    pub fn rules(self) -> RuleSet {
        match self {
            Self::ReadOnly => RuleSet::read_only(),
        }
    }

    /// Its name in a profile (`read_only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ReadOnly => "read_only",
        }
    }
}

impl fmt::Display for PermissionPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PermissionAction::{Allow, Ask, Deny};
    use proptest::prelude::*;

    #[test]
    fn the_read_only_preset_asks_about_reads_outside_the_checkout_either_way() {
        let rules = RuleSet::read_only();
        let action = |permission: Permission, argument: &str| {
            rules.evaluate(permission.as_str(), argument).action
        };
        assert_eq!(action(Permission::READ, "/etc/passwd"), Ask);
        for command in [
            "cat /etc/passwd",
            "head -n 3 ~/.ssh/id_rsa",
            "ls ..",
            "cat ../other/secret.txt",
            "rg token --glob=/home/user/**",
        ] {
            assert_eq!(action(Permission::BASH, command), Ask, "{command}");
        }
        for command in ["cat README.md", "ls -la src", "git status", "rg todo src"] {
            assert_eq!(action(Permission::BASH, command), Allow, "{command}");
        }
    }

    #[test]
    fn patterns_match_whole_arguments() {
        let cases = [
            ("ls*", "ls", true),
            ("ls*", "ls -la", true),
            ("ls*", "lsof", true),
            ("ls", "ls -la", false),
            ("git status*", "git status --short", true),
            ("git status*", "git stash", false),
            ("?at", "cat", true),
            ("?at", "at", false),
            ("*.rs", "src/lib.rs", true),
            ("*", "", true),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("**", "anything", true),
        ];
        for (pattern, arg, expected) in cases {
            assert_eq!(
                Pattern::new(pattern).matches(arg),
                expected,
                "{pattern} vs {arg}"
            );
        }
    }

    #[test]
    fn the_last_matching_rule_wins_and_unmatched_is_denied() {
        let rules = RuleSet::new([
            Rule::new(Permission::BASH, "*", Ask),
            Rule::new(Permission::BASH, "cargo *", Allow),
            Rule::new(Permission::BASH, "cargo publish*", Deny),
        ]);
        assert_eq!(rules.evaluate("bash", "cargo test").action, Allow);
        assert_eq!(
            rules.evaluate("bash", "cargo publish --dry-run").action,
            Deny
        );
        assert_eq!(rules.evaluate("bash", "make").action, Ask);
        let unmatched = rules.evaluate("write", "x");
        assert_eq!(unmatched.action, Deny);
        assert_eq!(unmatched.reason, Reason::NoRule);
        let reordered = RuleSet::new([
            Rule::new(Permission::BASH, "cargo publish*", Deny),
            Rule::new(Permission::BASH, "cargo *", Allow),
        ]);
        assert_eq!(
            reordered.evaluate("bash", "cargo publish").action,
            Allow,
            "order decides"
        );
    }

    #[test]
    fn evaluations_explain_themselves() {
        let rules = RuleSet::read_only();
        insta::assert_snapshot!(rules.evaluate("bash", "git status").explain(), @"allow by rule 19 (bash `git status *` → allow)");
        insta::assert_snapshot!(rules.evaluate("write", "src/lib.rs").explain(), @"deny by rule 42 (write `*` → deny)");
        insta::assert_snapshot!(rules.evaluate("bash", "ls -la; rm -rf x").explain(), @"ask: the command is compound (`;`), and rule 6 (bash `ls *` → allow) only allows single commands (a last rule `bash` `*` → allow allows compound ones too)");
        insta::assert_snapshot!(RuleSet::default().evaluate("read", "a").explain(), @"deny: no rule matches, and unmatched requests are denied");
    }

    #[test]
    fn an_allow_of_every_command_allows_compound_ones_unless_a_rule_after_it_speaks() {
        let all = RuleSet::new([Rule::new(Permission::BASH, "*", Allow)]);
        for command in [
            "sh -c 'echo x >> f'",
            "cargo build && cargo test",
            "ls | wc -l",
            "echo $(date)",
        ] {
            assert_eq!(all.evaluate("bash", command).action, Allow, "{command}");
        }
        // An earlier exception is overridden by the later `*` for a single
        // command as well: the compound one is allowed the same.
        let earlier = RuleSet::new([
            Rule::new(Permission::BASH, "rm *", Deny),
            Rule::new(Permission::BASH, "*", Allow),
        ]);
        assert_eq!(earlier.evaluate("bash", "rm -rf x").action, Allow);
        assert_eq!(earlier.evaluate("bash", "ls; rm -rf x").action, Allow);
        // An exception after it would be slipped past by chaining: asked.
        let later = RuleSet::new([
            Rule::new(Permission::BASH, "*", Allow),
            Rule::new(Permission::BASH, "rm *", Deny),
        ]);
        assert_eq!(later.evaluate("bash", "rm -rf x").action, Deny);
        assert_eq!(later.evaluate("bash", "ls; rm -rf x").action, Ask);
        let any_later = RuleSet::new([
            Rule::new(Permission::BASH, "*", Allow),
            Rule::new(Permission::ANY, "secrets/*", Deny),
        ]);
        assert_eq!(any_later.evaluate("bash", "cat a > b").action, Ask);
        // Rules for other permissions after it change nothing.
        let other = RuleSet::new([
            Rule::new(Permission::BASH, "*", Allow),
            Rule::new(Permission::WRITE, "secrets/*", Deny),
        ]);
        assert_eq!(other.evaluate("bash", "echo x >> f").action, Allow);
        // A narrower allow still allows single commands only.
        let narrow = RuleSet::new([Rule::new(Permission::BASH, "echo *", Allow)]);
        assert_eq!(narrow.evaluate("bash", "echo x >> f").action, Ask);
    }

    #[test]
    fn shadowed_rules_are_reported() {
        let rules = RuleSet::new([
            Rule::new(Permission::BASH, "ls*", Allow),
            Rule::new(Permission::BASH, "git status*", Allow),
            Rule::new(Permission::BASH, "*", Ask),
            Rule::new(Permission::READ, "src/*.rs", Deny),
            Rule::new(Permission::READ, "src/*", Allow),
            Rule::new(Permission::WRITE, "docs/?.md", Allow),
            Rule::new(Permission::ANY, "docs/*", Deny),
        ]);
        let messages: Vec<String> = rules.lint().iter().map(|s| s.message(&rules)).collect();
        insta::assert_snapshot!(messages.join("\n"), @r"
        rule 1 (bash `ls*` → allow) never decides: the later rule 3 (bash `*` → ask) matches everything it matches
        rule 2 (bash `git status*` → allow) never decides: the later rule 3 (bash `*` → ask) matches everything it matches
        rule 4 (read `src/*.rs` → deny) never decides: the later rule 5 (read `src/*` → allow) matches everything it matches
        rule 6 (write `docs/?.md` → allow) never decides: the later rule 7 (* `docs/*` → deny) matches everything it matches
        ");
        assert!(
            RuleSet::read_only().lint().is_empty(),
            "the preset has no dead rules"
        );
    }

    #[test]
    fn read_only_preset_table() {
        let rules = RuleSet::read_only();
        #[rustfmt::skip]
        let table: &[(&str, &str, PermissionAction)] = &[
            ("bash", "ls", Allow),
            ("bash", "ls -la src", Allow),
            ("bash", "  ls -la  ", Allow),
            ("bash", "cat Cargo.toml", Allow),
            ("bash", "head -n 20 README.md", Allow),
            ("bash", "wc -l src/lib.rs", Allow),
            ("bash", "git status", Allow),
            ("bash", "git status --short", Allow),
            ("bash", "git log --oneline -5", Allow),
            ("bash", "git diff HEAD~1", Allow),
            ("bash", "git show HEAD:src/lib.rs", Allow),
            ("bash", "rg -n 'fn main' src", Allow),
            ("bash", "grep -rn TODO .", Allow),
            ("bash", "pwd", Allow),
            // Not on the safe list: asked about.
            ("bash", "rm -rf target", Ask),
            ("bash", "cargo build", Ask),
            ("bash", "lsof -i", Ask),
            ("bash", "git push --force", Ask),
            ("bash", "git stash", Ask),
            ("bash", "find . -delete", Ask),
            // Chaining, substitution and redirection never ride on an allow.
            ("bash", "ls; rm -rf x", Ask),
            ("bash", "ls && rm x", Ask),
            ("bash", "ls || rm x", Ask),
            ("bash", "ls | sh", Ask),
            ("bash", "ls & rm x", Ask),
            ("bash", "ls $(rm x)", Ask),
            ("bash", "ls `rm x`", Ask),
            ("bash", "cat a > b", Ask),
            ("bash", "cat a >> b", Ask),
            ("bash", "cat < /etc/passwd", Ask),
            ("bash", "ls\nrm x", Ask),
            ("bash", "git status;rm -rf /", Ask),
            ("bash", "cat 'a;b'", Ask),
            // Safe commands with options that write or execute.
            ("bash", "git diff --output=patch.diff", Ask),
            ("bash", "git log --output=/tmp/x", Ask),
            ("bash", "rg --pre ./evil.sh pattern", Ask),
            ("bash", "git diff --ext-diff", Ask),
            ("bash", "tree -o listing.txt", Ask),
            ("bash", "tree -ao listing.txt", Ask),
            ("bash", "tree --output listing.txt", Ask),
            ("bash", "file -C -m magic", Ask),
            ("bash", "file -bC", Ask),
            ("bash", "file --compile", Ask),
            ("bash", "tree src", Allow),
            ("bash", "tree -L 2", Allow),
            ("bash", "file Cargo.toml", Allow),
            // Conservative: an option anywhere before a `C` is asked about.
            ("bash", "file -b Cargo.toml", Ask),
            ("bash", "tree", Allow),
            ("bash", "git log", Allow),
            // The other permissions.
            ("read", "src/lib.rs", Allow),
            ("read", "src/a/b/c.rs", Allow),
            ("read", "/etc/hosts", Ask),
            ("read", "/home/me/.ssh/id_ed25519", Ask),
            ("bash", "orcho status", Allow),
            ("bash", "orcho verify", Ask),
            ("mcp__github__create_issue", "{}", Deny),
            ("glob", "**/*.rs", Allow),
            ("grep", "TODO", Allow),
            ("write", "src/lib.rs", Deny),
            ("edit", "src/lib.rs", Deny),
            ("dispatch", "reviewer", Deny),
            ("webfetch", "https://example.com", Deny),
        ];
        assert!(table.len() >= 30);
        for (permission, argument, expected) in table {
            let got = rules.evaluate(permission, argument);
            assert_eq!(
                got.action,
                *expected,
                "{permission} {argument:?}: {}",
                got.explain()
            );
        }
    }

    #[test]
    fn the_bypass_table_is_never_allowed() {
        let rules = RuleSet::read_only();
        let table = include_str!("../tests/read_only_bypasses.txt");
        let lines: Vec<&str> = table
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert!(lines.len() >= 25);
        for line in lines {
            let got = rules.evaluate("bash", line);
            assert_ne!(got.action, Allow, "{line:?}: {}", got.explain());
        }
    }

    #[test]
    fn permission_names_may_be_globs() {
        let rules: RuleSet = serde_yaml::from_str(
            "- { permission: '*', pattern: '*', action: deny }\n- { permission: 'mcp__*', pattern: '*', action: ask }\n- { permission: 'mcp__docs__*', pattern: '*', action: allow }\n",
        )
        .unwrap();
        assert_eq!(rules.evaluate("mcp__docs__search", "").action, Allow);
        assert_eq!(rules.evaluate("mcp__github__push", "").action, Ask);
        assert_eq!(rules.evaluate("bash", "ls").action, Deny);
        assert!(rules.lint().is_empty(), "{:?}", rules.lint());
        let shadowed = RuleSet::new([
            Rule::new(Permission::new("mcp__docs__*").unwrap(), "*", Allow),
            Rule::new(Permission::new("mcp__*").unwrap(), "*", Deny),
        ]);
        assert_eq!(shadowed.lint().len(), 1);
        assert!(Permission::new("Mcp").is_err());
        assert!(Permission::new("").is_err());
    }

    #[test]
    fn path_rules_follow_glob_rules() {
        let rules = RuleSet::new([
            Rule::new(Permission::ANY, "*", Deny),
            Rule::new(Permission::WRITE, "src/**", Allow),
            Rule::new(Permission::WRITE, "src/*.lock", Deny),
            Rule::new(Permission::EDIT, "**/*.md", Allow),
        ]);
        assert_eq!(rules.evaluate("write", "src/a/lib.rs").action, Allow);
        assert_eq!(rules.evaluate("write", "src/Cargo.lock").action, Deny);
        assert_eq!(
            rules.evaluate("write", "src/a/Cargo.lock").action,
            Allow,
            "`*` stays within one segment"
        );
        assert_eq!(rules.evaluate("edit", "README.md").action, Allow);
        assert_eq!(rules.evaluate("edit", "docs/a/b.md").action, Allow);
        assert_eq!(rules.evaluate("edit", "docs/a/b.rs").action, Deny);
        // Text permissions keep `*` across `/`.
        let bash = RuleSet::new([Rule::new(Permission::BASH, "cat *", Allow)]);
        assert_eq!(bash.evaluate("bash", "cat src/a/lib.rs").action, Allow);
    }

    #[test]
    fn rules_read_from_yaml() {
        let rules: RuleSet = serde_yaml::from_str(
            "- { permission: bash, pattern: 'ls*', action: allow }\n- { permission: write, pattern: '*', action: deny }\n",
        )
        .unwrap();
        assert_eq!(rules.rules().len(), 2);
        let err =
            serde_yaml::from_str::<RuleSet>("- { permission: Bash, pattern: '*', action: allow }")
                .unwrap_err();
        assert!(
            err.to_string().contains("`Bash` is not a permission name"),
            "{err}"
        );
        let err =
            serde_yaml::from_str::<RuleSet>("- { permission: bash, pattern: '*', action: permit }")
                .unwrap_err();
        assert!(
            err.to_string().contains("unknown variant `permit`"),
            "{err}"
        );
    }

    fn glob() -> impl Strategy<Value = String> {
        "[ab/ *?]{0,7}"
    }

    proptest! {
        #[test]
        fn coverage_is_sound(b in glob(), a in glob(), s in "[ab/ ]{0,8}") {
            let (pb, pa) = (Pattern::new(&b), Pattern::new(&a));
            if pb.covers(&pa) && pa.matches(&s) {
                prop_assert!(pb.matches(&s), "{b} covers {a} but misses {s}");
            }
            if pb.covers_in(Mode::Path, &pa) && pa.matches_path(&s) {
                prop_assert!(pb.matches_path(&s), "{b} covers {a} as paths but misses {s}");
            }
        }

        #[test]
        fn every_pattern_covers_itself(a in glob()) {
            let p = Pattern::new(&a);
            prop_assert!(p.covers(&p));
        }

        #[test]
        fn compound_commands_are_never_allowed(prefix in "(ls|cat|git status)", sep in prop::sample::select(vec![";", "&&", "||", "|", "&", "$(", "`", ">", "<", "\n"]), rest in "[a-z][a-z ]{0,10}") {
            let command = format!("{prefix}{sep}{rest}");
            prop_assert_ne!(RuleSet::read_only().evaluate("bash", &command).action, Allow);
        }
    }
}
