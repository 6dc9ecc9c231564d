//! The ways in: a profile from a string, a file or a built-in. Each is
//! parsed ([`crate::parse`]), its `extends` merged ([`crate::extends`]) and
//! the merged profile validated ([`crate::validate`]); problems found there
//! are located by walking the events of the source they came from, which
//! only happens when there is something to report.

use camino::Utf8Path;

use crate::{
    Profile, ProfileError, ProfileErrorKind, builtin,
    extends::{self, Chain},
    parse::{self, parse_document},
    provenance::SourceName,
    validate,
};

impl Profile {
    /// Parses, merges (`extends: builtin:<name>` only) and validates a
    /// profile held in a string. Errors name the file `<string>`.
    ///
    /// ```
    /// use orcho_profile::Profile;
    ///
    /// let profile = Profile::from_yaml_str("schema: 1\nname: mine\nextends: builtin:quick\n")?;
    /// assert_eq!(profile.name, "mine");
    /// assert_eq!(profile.phases.len(), 1);
    /// # Ok::<(), orcho_profile::ProfileError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ProfileError`] with line, column and document path: invalid
    /// YAML, an unknown key, a wrong value, a failed cross-check, an
    /// `extends` of a file (which needs [`Profile::load`]), or hostile input.
    pub fn from_yaml_str(yaml: &str) -> Result<Self, ProfileError> {
        let mut chain = Chain::start("<string>".to_owned(), "<string>".to_owned());
        from_source(yaml, SourceName::Inline, &mut chain)
    }

    /// Like [`from_yaml_str`](Self::from_yaml_str), for bytes that may not
    /// be UTF-8.
    ///
    /// # Errors
    ///
    /// As [`from_yaml_str`](Self::from_yaml_str), plus
    /// [`ProfileErrorKind::NotUtf8`] with the line and column of the first
    /// invalid byte.
    pub fn from_yaml_slice(yaml: &[u8]) -> Result<Self, ProfileError> {
        let text = parse::utf8(yaml, "<string>")?;
        Self::from_yaml_str(text)
    }

    /// Reads, merges and validates the profile at `path`. A relative
    /// `extends` is resolved against the directory of the file that says it.
    ///
    /// # Errors
    ///
    /// As [`from_yaml_str`](Self::from_yaml_str), plus
    /// [`ProfileErrorKind::Read`] when the file cannot be read,
    /// [`ProfileErrorKind::TooLarge`], [`ProfileErrorKind::NotUtf8`], and
    /// the `extends` errors (cycles name the whole chain).
    pub fn load(path: impl AsRef<Utf8Path>) -> Result<Self, ProfileError> {
        let path = path.as_ref();
        let text = parse::read_bounded(path)
            .map_err(|kind| ProfileError::in_file(path.to_string(), kind))?;
        let mut chain = Chain::start(extends::file_key(path), path.to_string());
        from_source(&text, SourceName::File(path.to_owned()), &mut chain)
    }

    /// Reads, merges and validates the profile at `path` as
    /// [`load`](Self::load) does, with every file (`path` itself and each
    /// file it `extends`) given by `read` instead of the file system: the
    /// profile as a commit holds it, say. `read` gets paths as `path` and
    /// the `extends` values make them (relative ones stay relative, `.`
    /// dropped, `..` kept) and answers with the file's bytes, `None` when
    /// there is no such file.
    ///
    /// ```
    /// use camino::Utf8Path;
    /// use orcho_profile::Profile;
    ///
    /// let files = |path: &Utf8Path| match path.as_str() {
    ///     "orcho.yaml" => Some(b"schema: 1\nname: mine\nextends: base.yaml\n".to_vec()),
    ///     "base.yaml" => Some(b"schema: 1\nname: base\nextends: builtin:quick\n".to_vec()),
    ///     _ => None,
    /// };
    /// let profile = Profile::load_from("orcho.yaml", &files)?;
    /// assert_eq!((profile.name.as_str(), profile.phases.len()), ("mine", 1));
    /// # Ok::<(), orcho_profile::ProfileError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`load`](Self::load); a file `read` does not have is
    /// [`ProfileErrorKind::Read`] with [`std::io::ErrorKind::NotFound`].
    pub fn load_from(
        path: impl AsRef<Utf8Path>,
        read: &dyn Fn(&Utf8Path) -> Option<Vec<u8>>,
    ) -> Result<Self, ProfileError> {
        let path = path.as_ref();
        let read_text = |path: &Utf8Path| -> Result<String, ProfileErrorKind> {
            let bytes = read(path).ok_or_else(|| {
                ProfileErrorKind::Read(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file",
                ))
            })?;
            if bytes.len() as u64 > parse::MAX_PROFILE_BYTES {
                return Err(ProfileErrorKind::TooLarge {
                    len: bytes.len() as u64,
                    max: parse::MAX_PROFILE_BYTES,
                });
            }
            String::from_utf8(bytes).map_err(|e| ProfileErrorKind::NotUtf8 {
                offset: e.utf8_error().valid_up_to(),
            })
        };
        let text = read_text(path).map_err(|kind| ProfileError::in_file(path.to_string(), kind))?;
        let mut chain = Chain::reading(path.to_string(), path.to_string(), &read_text);
        from_source(&text, SourceName::File(path.to_owned()), &mut chain)
    }

    /// The profile as YAML: the merged document (no `extends`), which
    /// reads back to the same profile.
    ///
    /// ```
    /// use orcho_profile::Profile;
    ///
    /// let profile = Profile::from_yaml_str("schema: 1\nname: mine\nextends: builtin:quick\n")?;
    /// let yaml = profile.to_yaml();
    /// assert!(yaml.contains("name: mine") && !yaml.contains("extends"));
    /// assert_eq!(Profile::from_yaml_str(&yaml)?.phases.len(), 1);
    /// # Ok::<(), orcho_profile::ProfileError>(())
    /// ```
    pub fn to_yaml(&self) -> String {
        // Every field is a plain value: writing it cannot fail.
        serde_yaml::to_string(self).unwrap_or_else(|e| format!("# cannot be written: {e}\n"))
    }

    /// Where the verification command `name` is declared: the file of the
    /// profile (or of the one it extends) and the line, when it can be
    /// found.
    ///
    /// ```
    /// use orcho_profile::Profile;
    ///
    /// let profile = Profile::from_yaml_str(
    ///     "schema: 1\nname: p\nextends: builtin:quick\nverification:\n  commands:\n    - { name: lint, argv: [\"true\"] }\n    - { name: test, argv: [cargo, test] }\n  required: [test]\n",
    /// )?;
    /// assert_eq!(profile.command_declared_at("test").1, Some(7));
    /// assert_eq!(profile.command_declared_at("nope").1, None);
    /// # Ok::<(), orcho_profile::ProfileError>(())
    /// ```
    pub fn command_declared_at(&self, name: &str) -> (String, Option<usize>) {
        let index = self
            .verification
            .as_ref()
            .and_then(|v| v.commands.iter().position(|c| c.name.as_str() == name));
        let root = crate::DocPath::root().key("verification");
        let path = match index {
            Some(i) => root.key("commands").index(i),
            None => root,
        };
        let located = self.provenance.locate_section("verification", path);
        (located.file, index.and(located.position.map(|p| p.line)))
    }

    /// The built-in profile `name` (see [`builtin`](crate::builtin)).
    ///
    /// ```
    /// use orcho_profile::Profile;
    ///
    /// let profile = Profile::builtin("default")?;
    /// assert_eq!(profile.phases.len(), 4);
    /// let err = Profile::builtin("defualt").unwrap_err();
    /// assert_eq!(err.suggestion(), Some("default"));
    /// # Ok::<(), orcho_profile::ProfileError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ProfileErrorKind::UnknownBuiltin`] (with the nearest name) when
    /// there is no such built-in.
    pub fn builtin(name: &str) -> Result<Self, ProfileError> {
        let Some((name, text)) = builtin::find(name) else {
            return Err(ProfileError::in_file(
                format!("builtin:{}", name.chars().take(60).collect::<String>()),
                ProfileErrorKind::UnknownBuiltin {
                    name: name.chars().take(60).collect(),
                    nearest: orcho_core::nearest(name, builtin::NAMES.iter().copied())
                        .map(str::to_owned),
                },
            ));
        };
        let shown = format!("builtin:{name}");
        let mut chain = Chain::start(shown.clone(), shown);
        from_source(text, SourceName::Builtin(name), &mut chain)
    }
}

/// Parses one source, applies its `extends`, validates the result.
fn from_source(
    text: &str,
    name: SourceName,
    chain: &mut Chain<'_>,
) -> Result<Profile, ProfileError> {
    let document = parse_document(text, name)?;
    let merged = extends::apply(document, chain)?;
    validate::check(&merged)?;
    Ok(merged)
}
