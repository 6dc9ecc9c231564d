//! `orcho report`: a phase writes its output document through Orcho, which
//! checks it first (what an agent running a phase calls; a read-only
//! phase's rules allow it).

use crate::{error::CliError, output::Report};

/// Writes the phase output document given as `json`, in `file` (`-`:
/// standard input), or on standard input, to the file `ORCHO_OUTPUT` names.
pub(crate) fn report(json: Option<&str>, file: Option<&str>) -> Result<Report, CliError> {
    let Some(output) = std::env::var_os("ORCHO_OUTPUT") else {
        return Err(CliError::usage(
            "`orcho report` writes a phase's output document, and ORCHO_OUTPUT is not set",
        )
        .with_hint("it runs inside a phase that orcho started; `orcho schema phase-output` shows the document"));
    };
    let output = camino::Utf8PathBuf::try_from(std::path::PathBuf::from(output))
        .map_err(|_| CliError::usage("ORCHO_OUTPUT is not a UTF-8 path"))?;
    let text = match (json, file) {
        (Some(json), _) => json.to_owned(),
        (None, Some(path)) if path != "-" => std::fs::read_to_string(path)
            .map_err(|e| CliError::usage(format!("`--file {path}`: cannot read it: {e}")))?,
        _ => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text).map_err(
                |e| CliError::msg(format!("cannot read the document from standard input: {e}")),
            )?;
            text
        }
    };
    let phase = crate::place::env_text("ORCHO_PHASE").unwrap_or_else(|| "phase".to_owned());
    let said = orcho::phase::output::parse(&text, &phase).map_err(|e| {
        CliError::usage(format!("the document is not a phase output document: {e}"))
            .with_hint("`orcho schema phase-output` prints what it may hold")
    })?;
    orcho::core::fs::write_atomic(&output, text.as_bytes())?;
    let what = match (&said.interruption, said.verdict, &said.plan) {
        (Some(_), _, _) => "questions or a failed step".to_owned(),
        (None, Some(verdict), _) => format!("verdict {verdict}"),
        (None, None, Some(_)) => "a plan".to_owned(),
        _ => "a report".to_owned(),
    };
    #[derive(serde::Serialize)]
    struct Reported<'a> {
        reported: &'a str,
        output: &'a camino::Utf8Path,
    }
    Ok(Report::new(&Reported {
        reported: &what,
        output: &output,
    })
    .line(format!("reported {what} to {output}")))
}
