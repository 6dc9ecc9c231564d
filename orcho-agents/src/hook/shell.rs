//! What a shell command line does to the files it names, as far as its
//! words tell: its simple commands (past `sudo`, `env`, `VAR=…` and the
//! shell's keywords), which of them only read, which remove or overwrite
//! what they name, and glob patterns matched one path component at a time.
//! The control-file guard reads commands through this; it is a guard
//! against mistakes, not a shell.

/// One simple command: its program (by file name) and its arguments,
/// quotes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The program's file name (`/bin/rm` and `\rm` are `rm`).
    pub program: String,
    /// The program as the command spells it (`/usr/local/bin/orcho`).
    pub program_word: String,
    /// Its arguments.
    pub args: Vec<String>,
}

/// Words that run the command after them (with their own options first).
const WRAPPERS: &[&str] = &[
    "sudo", "doas", "env", "command", "builtin", "exec", "nohup", "nice", "ionice", "time",
    "timeout", "xargs", "stdbuf",
];
/// The shell's keywords that may stand before a command.
const KEYWORDS: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "in",
    "case", "esac",
];

/// The simple commands of `command`: split at the shell's operators
/// (`|`, `;`, `&`, line breaks, parentheses, backquotes, `$(`, `<(`).
pub fn segments(command: &str) -> Vec<Segment> {
    command
        .split(['|', ';', '&', '\n', '\r', '(', ')', '`'])
        .filter_map(|part| {
            let mut words: Vec<String> = part
                .split_whitespace()
                .map(|w| w.trim_matches(|c| c == '\'' || c == '"').to_owned())
                .filter(|w| !w.is_empty() && w != "$" && w != "<")
                .collect();
            // Past the keywords, assignments and wrappers (and the wrappers'
            // options, and `timeout`'s duration).
            let mut start = 0;
            while let Some(word) = words.get(start) {
                let name = program_name(word);
                if KEYWORDS.contains(&word.as_str()) || is_assignment(word) {
                    start += 1;
                } else if WRAPPERS.contains(&name) {
                    start += 1;
                    while words
                        .get(start)
                        .is_some_and(|w| w.starts_with('-') || is_assignment(w))
                    {
                        start += 1;
                    }
                    if name == "timeout"
                        && words
                            .get(start)
                            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit()))
                    {
                        start += 1;
                    }
                } else {
                    break;
                }
            }
            let mut rest = words.split_off(start.min(words.len())).into_iter();
            let program_word = rest.next()?;
            Some(Segment {
                program: program_name(&program_word).to_owned(),
                program_word,
                args: rest.collect(),
            })
        })
        .collect()
}

/// A program word by its file name: `/bin/rm` and `\rm` are `rm`.
fn program_name(word: &str) -> &str {
    let word = word.trim_start_matches('\\');
    word.rsplit('/').next().unwrap_or(word)
}

/// `NAME=value`, as the shell reads it before a command.
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// git's global options that take a value as the next word.
const GIT_VALUED: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace"];

impl Segment {
    /// For `git`: its subcommand and that subcommand's arguments, past
    /// git's own options (`-C dir`, `-c key=value`, `--no-pager`, …).
    pub fn git(&self) -> Option<(&str, &[String])> {
        if self.program != "git" {
            return None;
        }
        let mut i = 0;
        while let Some(word) = self.args.get(i) {
            if GIT_VALUED.contains(&word.as_str()) {
                i += 2;
            } else if word.starts_with('-') {
                i += 1;
            } else {
                return Some((word.as_str(), &self.args[i + 1..]));
            }
        }
        None
    }

    /// git's `-c key=value` options.
    pub fn git_config(&self) -> impl Iterator<Item = &str> {
        self.args
            .windows(2)
            .filter(|w| w[0] == "-c")
            .map(|w| w[1].as_str())
    }

    /// Whether the command only reads the files it names.
    pub fn reads(&self) -> bool {
        const READERS: &[&str] = &[
            "cat",
            "head",
            "tail",
            "less",
            "more",
            "grep",
            "egrep",
            "fgrep",
            "rg",
            "ls",
            "wc",
            "diff",
            "stat",
            "file",
            "echo",
            "printf",
            "sha256sum",
            "sha1sum",
            "md5sum",
            "nl",
            "jq",
            "uniq",
            "cut",
            "od",
            "xxd",
            "hexdump",
            "strings",
            "realpath",
            "readlink",
            "basename",
            "dirname",
            "pwd",
            "true",
            "test",
            "[",
            "which",
            "type",
            "sort",
            "column",
            "tac",
            "bat",
        ];
        const GIT_READERS: &[&str] = &[
            "diff",
            "log",
            "show",
            "status",
            "blame",
            "grep",
            "ls-files",
            "rev-parse",
            "cat-file",
            "describe",
        ];
        let option = |prefixes: &[&str]| {
            self.args
                .iter()
                .any(|a| prefixes.iter().any(|p| a.starts_with(p)))
        };
        match self.program.as_str() {
            "git" => self.git().is_some_and(|(sub, args)| {
                GIT_READERS.contains(&sub) && !args.iter().any(|a| a.starts_with("--output"))
            }),
            // Options that write a file, or run a program.
            "sort" => !option(&["-o", "--output"]),
            "rg" => !option(&["--pre"]),
            "sed" => {
                !option(&["-i", "--in-place"])
                    && !self.args.iter().any(|a| {
                        a == "w" || a.starts_with("w ") || a.contains(";w ") || a.contains("/w ")
                    })
            }
            program => READERS.contains(&program),
        }
    }

    /// Whether the command names `word` among its arguments.
    pub fn names(&self, word: &str) -> bool {
        self.args.iter().any(|a| {
            a == word
                || a.strip_prefix('<').is_some_and(|r| r == word)
                || a.rsplit_once('=').is_some_and(|(_, v)| v == word)
        })
    }

    /// What the command removes, moves away or overwrites whole, with
    /// everything under it: its arguments for `rm`, `mv`, `find …
    /// -delete`; the last one for `cp` and `rsync`; git's paths for `rm`,
    /// `mv`, `checkout`, `restore`, `clean`. `find` with a name to match
    /// names what `guarded_name` says the name may match, and nothing
    /// else.
    pub fn removes(&self, guarded_name: &dyn Fn(&str) -> bool) -> Vec<&str> {
        fn plain(args: &[String]) -> Vec<&str> {
            args.iter()
                .map(String::as_str)
                .filter(|a| !a.starts_with('-'))
                .collect()
        }
        let has = |flags: &[&str]| self.args.iter().any(|a| flags.contains(&a.as_str()));
        match self.program.as_str() {
            "rm" | "rmdir" | "mv" | "unlink" | "shred" | "truncate" => plain(&self.args),
            "cp" | "rsync" | "install" | "ln" => {
                plain(&self.args).last().copied().into_iter().collect()
            }
            "find" => {
                if !has(&["-delete", "-exec", "-execdir", "-ok", "-okdir"]) {
                    return Vec::new();
                }
                let names: Vec<&str> = self
                    .args
                    .windows(2)
                    .filter(|w| matches!(w[0].as_str(), "-name" | "-iname"))
                    .map(|w| w[1].as_str())
                    .collect();
                let opaque = has(&[
                    "-o",
                    "-or",
                    "!",
                    "-not",
                    "-path",
                    "-ipath",
                    "-wholename",
                    "-iwholename",
                    "-regex",
                    "-iregex",
                    "-prune",
                ]);
                if !names.is_empty() && !opaque && !names.iter().any(|n| guarded_name(n)) {
                    return Vec::new();
                }
                self.args
                    .iter()
                    .map(String::as_str)
                    .take_while(|a| !a.starts_with('-') && *a != "(" && *a != "!")
                    .collect()
            }
            "git" => match self.git() {
                Some(("rm", args)) if !args.iter().any(|a| a == "--cached") => plain(args),
                Some(("mv" | "clean" | "checkout", args)) => plain(args),
                Some(("restore", args))
                    if !args.iter().any(|a| a == "--staged" || a == "-S")
                        || args.iter().any(|a| a == "--worktree" || a == "-W") =>
                {
                    plain(args)
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }
}

/// Whether a shell word is a glob pattern.
pub fn is_glob(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// Whether `name` (one path component) matches the glob `pattern`: `*` any
/// run of characters, `?` one, `[…]` one (whatever the class: it errs on
/// matching). Time linear in the product of the lengths, never more.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Tok {
        Star,
        One,
        Lit(char),
    }
    let mut toks = Vec::new();
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' => {
                if toks.last() != Some(&Tok::Star) {
                    toks.push(Tok::Star);
                }
            }
            '?' => toks.push(Tok::One),
            '[' => match chars[i + 1..].iter().position(|&c| c == ']') {
                Some(end) => {
                    toks.push(Tok::One);
                    i += end + 1;
                }
                None => toks.push(Tok::Lit('[')),
            },
            c => toks.push(Tok::Lit(c)),
        }
        i += 1;
    }
    let name: Vec<char> = name.chars().collect();
    let (mut t, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match toks.get(t) {
            Some(Tok::One) => {
                t += 1;
                n += 1;
            }
            Some(Tok::Lit(c)) if *c == name[n] => {
                t += 1;
                n += 1;
            }
            Some(Tok::Star) => {
                star = Some((t, n));
                t += 1;
            }
            _ => match star {
                Some((st, sn)) => {
                    t = st + 1;
                    n = sn + 1;
                    star = Some((st, sn + 1));
                }
                None => return false,
            },
        }
    }
    toks[t..].iter().all(|tok| *tok == Tok::Star)
}

/// Whether the glob `pattern` (a path, matched one component at a time)
/// names `target` or something above it (`Above`), `target` itself
/// (`Itself`), or something inside it (`Inside`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// A directory above the target.
    Above,
    /// The target.
    Itself,
    /// Something inside the target.
    Inside,
}

/// How the glob path `pattern` reaches `target` (both absolute and
/// normalized), if it may.
pub fn glob_reach(pattern: &str, target: &str) -> Option<Reach> {
    let p: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty()).collect();
    let t: Vec<&str> = target.split('/').filter(|c| !c.is_empty()).collect();
    let shared = p.len().min(t.len());
    if !p[..shared]
        .iter()
        .zip(&t[..shared])
        .all(|(p, t)| glob_matches(p, t))
    {
        return None;
    }
    Some(match p.len().cmp(&t.len()) {
        std::cmp::Ordering::Less => Reach::Above,
        std::cmp::Ordering::Equal => Reach::Itself,
        std::cmp::Ordering::Greater => Reach::Inside,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrappers_and_keywords_are_seen_through() {
        let programs =
            |line: &str| -> Vec<String> { segments(line).into_iter().map(|s| s.program).collect() };
        assert_eq!(programs("sudo -E rm -rf ."), ["rm"]);
        assert_eq!(programs("\\rm x; /bin/rm y"), ["rm", "rm"]);
        assert_eq!(programs("{ rm -rf .; }"), ["rm"]);
        assert_eq!(programs("if x; then rm -rf .; fi"), ["x", "rm"]);
        assert_eq!(programs("HUSKY=0 env -i A=1 git commit"), ["git"]);
        assert_eq!(programs("timeout 5 rm x"), ["rm"]);
        assert_eq!(programs("echo `rm orcho.yaml`"), ["echo", "rm"]);
        assert_eq!(programs("cat <(rm -rf .orcho)"), ["cat", "rm"]);
        let git = &segments("git -C /repo -c core.hooksPath=/dev/null --no-pager commit -n")[0];
        assert_eq!(git.git().map(|(s, _)| s), Some("commit"));
        assert_eq!(
            git.git_config().collect::<Vec<_>>(),
            ["core.hooksPath=/dev/null"]
        );
    }

    #[test]
    fn readers_that_write_are_not_readers() {
        let reads = |line: &str| segments(line)[0].reads();
        assert!(reads("sed -n 1,200p orcho.yaml"));
        assert!(reads("git --no-pager diff orcho.yaml"));
        assert!(reads("jq . .claude/settings.json"));
        assert!(!reads("sed -i s/a/b/ orcho.yaml"));
        assert!(!reads("git diff --output=orcho.yaml"));
        assert!(!reads("rg --pre rm x orcho.yaml"));
        assert!(!reads("sort -o orcho.yaml x"));
    }

    #[test]
    fn what_a_command_removes() {
        let none = |_: &str| false;
        let guarded = |n: &str| glob_matches(n, "orcho.yaml") || glob_matches(n, "settings.json");
        let removes = |line: &str| -> Vec<String> {
            segments(line)
                .iter()
                .flat_map(|s| s.removes(&guarded))
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(removes("cd /repo && rm -rf target"), ["target"]);
        assert_eq!(
            removes("find . -name '*.pyc' -delete"),
            Vec::<String>::new()
        );
        assert_eq!(removes("find . -name settings.json -delete"), ["."]);
        assert_eq!(removes("find . -path ./x -prune -o -delete"), ["."]);
        assert_eq!(removes("git restore --staged ."), Vec::<String>::new());
        assert_eq!(removes("git rm -r --cached ."), Vec::<String>::new());
        assert_eq!(removes("git -C . checkout -- ."), ["."]);
        assert_eq!(removes("cp -r /tmp/evil/. ."), ["."]);
        assert_eq!(segments("ls")[0].removes(&none), Vec::<&str>::new());
    }

    #[test]
    fn globs_match_per_component_in_linear_time() {
        assert!(glob_matches("orcho.y*ml", "orcho.yaml"));
        assert!(glob_matches("*.yaml", "orcho.yaml"));
        assert!(glob_matches(".orch?", ".orcho"));
        assert!(glob_matches("[o]rcho.yaml", "orcho.yaml"));
        assert!(!glob_matches("*.pyc", "orcho.yaml"));
        assert!(glob_matches("*", ""));
        // Forty stars against a name they cannot match: answered at once.
        let stars = format!("{}z", "*".repeat(40));
        assert!(!glob_matches(&stars, "opencode.json"));
        let long = format!("{}z", "*a".repeat(5000));
        assert!(!glob_matches(&long, &"a".repeat(5000)));
        assert_eq!(glob_reach("/r/*", "/r/orcho.yaml"), Some(Reach::Itself));
        assert_eq!(glob_reach("/*", "/r/orcho.yaml"), Some(Reach::Above));
        assert_eq!(glob_reach("/r/.orcho/*", "/r/.orcho"), Some(Reach::Inside));
        assert_eq!(glob_reach("/r/*.pyc", "/r/orcho.yaml"), None);
    }
}

/// The Orcho decision a shell command line records, as far as its words
/// tell, in any spelling: `orcho handoff decide …`, a path to the binary,
/// `env`/`sh -c`/`xargs` in front, quoted or split across a variable
/// (`$O delivery decide`), `cargo run -p orcho-cli -- plan approve`. Two
/// words that only a decision has next to each other (`handoff decide`,
/// `delivery decide`, `plan approve`, `serve token`, `--ack-stops`,
/// `--ack-weakening` and its abbreviations) are
/// enough; the one-word verbs (`answer`, `deviation`, `intake RUN ACTION`,
/// `decide RUN ACTION`, `cancel`) count after a word that names `orcho`. `None` for anything
/// else (`orcho verify`, `orcho handoff show`).
pub fn orcho_decision(command: &str) -> Option<&'static str> {
    let words: Vec<String> = command
        .split(|c: char| c.is_whitespace() || ";|&<>()`{}[],".contains(c))
        .map(|w| {
            w.trim_matches(|c| c == '\'' || c == '"' || c == '\\')
                .to_ascii_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect();
    let at = |i: usize| words.get(i).map_or("", String::as_str);
    for i in 0..words.len() {
        let (word, next) = (at(i), at(i + 1));
        match (word, next) {
            ("handoff", "decide") => return Some("orcho handoff decide"),
            ("delivery", "decide") => return Some("orcho delivery decide"),
            ("permission" | "permissions", "decide") => return Some("orcho permission decide"),
            ("intake", "decide") => return Some("orcho intake"),
            ("plan", "approve" | "request-changes" | "reject") => return Some("orcho plan"),
            ("serve", "token") => return Some("orcho serve token"),
            _ => {}
        }
        if word == "--ack-stops" {
            return Some("orcho status --ack-stops");
        }
        if word.starts_with("--ack-weak") {
            return Some("orcho status --ack-weakening");
        }
        if !names_orcho(word) {
            continue;
        }
        // After a word naming Orcho: its subcommand, past global options.
        let mut j = i + 1;
        while at(j).starts_with("--") {
            j += if matches!(at(j), "--checkout" | "--store") {
                2
            } else {
                1
            };
        }
        // `intake RUN` and `decide RUN` show; anything more after the run
        // (an action, before or after its options) decides.
        let decides = || {
            words
                .iter()
                .skip(j + 1)
                .filter(|w| w.as_str() != "--json")
                .count()
                > 1
        };
        let verb = match at(j) {
            "answer" => "orcho answer",
            "deviation" => "orcho deviation",
            "cancel" => "orcho cancel",
            "intake" if at(j + 1) != "show" && decides() => "orcho intake",
            "decide" if decides() => "orcho decide",
            _ => continue,
        };
        return Some(verb);
    }
    None
}

/// Whether a word names the `orcho` binary: `orcho`, a path ending in it,
/// `orcho-cli` (as `cargo run -p` names it), or a variable that could hold
/// it (`$ORCHO`, `${ORCHO_BIN}`).
fn names_orcho(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    name == "orcho" || name == "orcho-cli" || (word.starts_with('$') && word.contains("orcho"))
}

#[cfg(test)]
mod decision_tests {
    use super::orcho_decision;

    #[test]
    fn a_decision_is_found_in_any_spelling() {
        for command in [
            "orcho handoff decide latest continue_with_waiver --note ok",
            "/usr/local/bin/orcho delivery decide 2026 approve",
            "env -u CLAUDECODE orcho delivery decide latest approve",
            "sh -c 'orcho plan approve latest'",
            "O=orcho; $O handoff decide latest continue",
            "cargo run -q -p orcho-cli -- delivery decide latest approve",
            "echo latest | xargs -I{} orcho handoff decide {} halt",
            "ORCHO=$(which orcho); \"$ORCHO\" answer latest --answer yes",
            "orcho --checkout . deviation latest retry",
            "orcho intake latest include",
            "orcho intake latest --message wip commit",
            "orcho decide latest halt",
            "orcho decide latest --note 'looks fine' continue_with_waiver",
            "orcho --json decide latest approve",
            "orcho cancel latest",
            "orcho status --ack-stops",
            "orcho status --ack-weakening",
            "orcho status --ack-weak",
            "orcho serve token add me",
            "orcho permission decide latest allow",
            "env -u ORCHO_RUN setsid -f orcho permissions decide latest allow --id ask-0001",
            "orcho intake decide latest include",
            "python3 -c \"import subprocess; subprocess.run(['orcho','handoff','decide','latest','halt'])\"",
            "ORCHO HANDOFF DECIDE latest halt",
        ] {
            assert!(orcho_decision(command).is_some(), "{command}");
        }
        for command in [
            "orcho verify",
            "orcho status",
            "orcho handoff show latest",
            "orcho delivery show latest",
            "orcho intake latest",
            "orcho intake latest --json",
            "orcho intake show latest",
            "orcho permissions check --bash 'git push'",
            "orcho decide latest",
            "orcho --json decide latest",
            "orcho inbox",
            "git commit -m 'answer the reviewer'",
            "grep -r cancel src",
            "cargo test -- --nocapture",
        ] {
            assert_eq!(orcho_decision(command), None, "{command}");
        }
    }
}
