//! Collects every error of one derive so the user sees them all at once (serde's `Ctxt`).

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::fmt::Display;

/// The errors found so far.
#[derive(Default)]
pub struct Ctxt {
    errors: Vec<syn::Error>,
    /// Whether an error leaves the input unfit to expand (the generated code would not
    /// type-check), so that only a stub can be emitted beside it.
    blocking: bool,
}

impl Ctxt {
    /// Records an error spanned at `tokens`.
    pub fn error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
        self.blocking = true;
    }

    /// Records a broken design rule, spanned at `tokens`, after which the input still
    /// expands whole: the code the user wrote against it then reports nothing more.
    pub fn rule_error_spanned_by(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.errors.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error from syn.
    pub fn syn_error(&mut self, error: syn::Error) {
        self.errors.push(error);
        self.blocking = true;
    }

    /// Whether any error was recorded.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Whether an error leaves the input unfit to expand.
    pub fn blocks_expansion(&self) -> bool {
        self.blocking
    }

    /// All errors as `compile_error!` invocations.
    pub fn to_compile_errors(&self) -> TokenStream {
        self.errors
            .iter()
            .map(syn::Error::to_compile_error)
            .collect()
    }
}

/// "did you mean `x`?" for the closest of `candidates`, if any is close enough.
pub fn did_you_mean<'a>(unknown: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(unknown, candidates)
        .map(|candidate| format!("; did you mean `{candidate}`?"))
        .unwrap_or_default()
}

/// The candidate closest to `unknown`, if one is close enough to be what was meant.
pub fn closest<'a>(
    unknown: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(unknown, candidate), candidate))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}
