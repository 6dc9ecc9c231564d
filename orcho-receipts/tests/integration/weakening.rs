//! The weakening corpus (`tests/weakening/corpus/`): changes in Rust,
//! Python, JavaScript/TypeScript and Go that weaken a change's own proof,
//! each naming the detector that must find it, and honest changes that
//! nothing may flag. Checks each detector's recall (at least 95%) and how
//! often an honest change is flagged (at most 2%), and prints the figures
//! `docs/receipts.md` quotes.

use std::collections::BTreeMap;

use camino::Utf8PathBuf;
use orcho_receipts::weakening::{ChangedFile, Detector, weakenings};

use crate::Result;

/// One case of the corpus.
struct Case {
    name: String,
    language: String,
    expect: Option<Detector>,
    files: Vec<ChangedFile>,
}

fn detector(word: &str) -> Option<Detector> {
    Detector::ALL.into_iter().find(|d| d.as_str() == word)
}

/// Reads `text` (one corpus file) into its cases.
fn parse(language: &str, text: &str) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let Some(name) = line.strip_prefix("=== ") else {
            continue;
        };
        let expect = lines
            .next()
            .and_then(|l| l.strip_prefix("expect: "))
            .ok_or_else(|| format!("{name}: no `expect:`"))?;
        let expect = match expect {
            "none" => None,
            word => Some(detector(word).ok_or_else(|| format!("{name}: no detector `{word}`"))?),
        };
        let mut files = Vec::new();
        while let Some(line) = lines.next_if(|l| l.starts_with("--- file: ")) {
            let path = line.trim_start_matches("--- file: ").to_owned();
            let mut renamed = None;
            let (mut before, mut after): (Option<String>, Option<String>) = (None, None);
            let mut into: Option<&mut Option<String>> = None;
            for line in lines.by_ref() {
                match line {
                    "--- end" => break,
                    "--- before" => {
                        before = Some(String::new());
                        into = Some(&mut before);
                    }
                    "--- after" => {
                        after = Some(String::new());
                        into = Some(&mut after);
                    }
                    l if l.starts_with("--- renamed-from: ") => {
                        renamed = Some(l.trim_start_matches("--- renamed-from: ").to_owned());
                    }
                    l => {
                        if let Some(Some(text)) = into.as_mut().map(|t| t.as_mut()) {
                            text.push_str(l);
                            text.push('\n');
                        }
                    }
                }
            }
            let mut file = ChangedFile::new(
                Utf8PathBuf::from(path),
                before.map(String::into_bytes),
                after.map(String::into_bytes),
            );
            if let Some(from) = renamed {
                file = file.renamed_from(from);
            }
            files.push(file);
        }
        cases.push(Case {
            name: name.to_owned(),
            language: language.to_owned(),
            expect,
            files,
        });
    }
    Ok(cases)
}

fn corpus() -> Result<Vec<Case>> {
    let dir = Utf8PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/weakening/corpus");
    let mut cases = Vec::new();
    for language in ["rust", "python", "js", "go", "config"] {
        let text = std::fs::read_to_string(dir.join(format!("{language}.cases")))?;
        cases.extend(parse(language, &text)?);
    }
    Ok(cases)
}

#[test]
fn the_corpus_is_found_with_its_recall_and_false_flags() -> Result {
    let cases = corpus()?;
    assert!(cases.len() >= 150, "{} cases", cases.len());
    // Per detector: cases that expect it, and of them, found.
    let mut recall: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut honest, mut flagged) = (0usize, Vec::new());
    let mut missed = Vec::new();
    let mut languages: BTreeMap<&str, usize> = BTreeMap::new();
    for case in &cases {
        *languages.entry(case.language.as_str()).or_default() += 1;
        let found = weakenings(&case.files);
        match case.expect {
            Some(expect) => {
                let entry = recall.entry(expect.as_str()).or_default();
                entry.0 += 1;
                if found.iter().any(|w| w.detector == expect) {
                    entry.1 += 1;
                } else {
                    missed.push(format!("{} ({expect}): found {found:?}", case.name));
                }
            }
            None => {
                honest += 1;
                if !found.is_empty() {
                    flagged.push(format!("{}: {found:?}", case.name));
                }
            }
        }
    }
    println!(
        "weakening corpus: {} cases ({languages:?}), {honest} honest",
        cases.len()
    );
    println!("| detector | cases | found | recall |");
    println!("|---|---|---|---|");
    for (detector, (cases, found)) in &recall {
        println!(
            "| `{detector}` | {cases} | {found} | {:.1}% |",
            100.0 * *found as f64 / *cases as f64
        );
    }
    println!(
        "honest changes flagged: {} of {honest} ({:.1}%)",
        flagged.len(),
        100.0 * flagged.len() as f64 / honest as f64
    );
    for case in &flagged {
        println!("  flagged: {case}");
    }
    // Every detector that reads a change's files is measured on enough
    // cases to mean something.
    for detector in [
        Detector::TestDeleted,
        Detector::SkipMarker,
        Detector::OnlyMarker,
        Detector::TodoMarker,
        Detector::XfailMarker,
        Detector::FewerAssertions,
        Detector::RunnerConfig,
        Detector::TestScript,
    ] {
        let cases = recall.get(detector.as_str()).map_or(0, |r| r.0);
        assert!(cases >= 5, "`{detector}`: {cases} case(s) in the corpus");
    }
    for (detector, (cases, found)) in &recall {
        assert!(
            *found as f64 >= 0.95 * *cases as f64,
            "`{detector}`: {found} of {cases} found; missed:\n{}",
            missed.join("\n")
        );
    }
    assert!(
        flagged.len() as f64 <= 0.02 * honest as f64,
        "{} of {honest} honest changes flagged:\n{}",
        flagged.len(),
        flagged.join("\n")
    );
    Ok(())
}
