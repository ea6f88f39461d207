//! `begins_with` on a sort key part: the values of a string part that start with some text,
//! or the times of a time part within one year, month, day, hour, minute or second. Exact by
//! construction, as ranges are: the prefix is the start of the text the part writes, and a
//! string's holds none of its template's separators, so a key starts with the prefix exactly
//! where its part does.

use crate::key::{KeyError, KeyPart, PartContext};
use std::marker::PhantomData;

#[doc(hidden)]
/// What [`Query::begins_with`](super::Query::begins_with) takes for a sort key part of type
/// `T`: text for a `String` part (`"WARN"`), a [`Truncated`] time for a time part
/// (`Truncated::day(&at)`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is no prefix of a `{T}` key part",
    label = "`begins_with` takes text for a `String` part, and a `Truncated` time for a time part",
    note = "the start of the key text of an integer, a UUID, `bool` or an enum is no range of its values that a key condition can promise: compare it for equality, or use a range (`between`, `lt`, ..)"
)]
pub trait PartPrefix<T>: sealed::Sealed<T> {
    /// The prefix as the query keeps it.
    #[doc(hidden)]
    fn into_prefix(self) -> Prefix;
}

mod sealed {
    pub trait Sealed<T> {}
}

#[doc(hidden)]
/// A prefix of a sort key part, kept until the query renders its key condition.
pub struct Prefix {
    /// The text the part's key text starts with, or why there is none.
    text: Result<String, KeyError>,
    /// Free text (a string's), which must hold none of its template's separators.
    free: bool,
}

impl Prefix {
    /// Appends the prefix to `out`, as the part at `context` would be written.
    pub(super) fn write(&self, context: PartContext, out: &mut String) -> Result<(), KeyError> {
        let text = self.text.as_ref().map_err(Clone::clone)?;
        if self.free {
            // As a string part is written: refused where it holds a separator of the template.
            text.as_str().render_part(context, out)
        } else {
            out.push_str(text);
            Ok(())
        }
    }
}

impl sealed::Sealed<String> for &str {}
// Not listed in a compile error's help: its message says what a prefix is.
#[diagnostic::do_not_recommend]
impl PartPrefix<String> for &str {
    fn into_prefix(self) -> Prefix {
        Prefix {
            text: Ok(self.to_owned()),
            free: true,
        }
    }
}

impl sealed::Sealed<String> for String {}
// Not listed in a compile error's help: its message says what a prefix is.
#[diagnostic::do_not_recommend]
impl PartPrefix<String> for String {
    fn into_prefix(self) -> Prefix {
        Prefix {
            text: Ok(self),
            free: true,
        }
    }
}

/// A time cut to a whole unit, as a query's prefix of a time part: every time within that
/// year, month, day, hour, minute or second. `Truncated::day(&at)` of a
/// `chrono::DateTime<Utc>` part selects the times of `at`'s day (in UTC),
/// `Truncated::month(&date)` of a `NaiveDate` part the dates of its month. Time parts are
/// written in one width (`2020-04-27T13:45:00.000000000Z`), so each unit ends at a known
/// place in the key.
pub struct Truncated<T> {
    text: Result<String, KeyError>,
    part: PhantomData<fn() -> T>,
}

impl<T: KeyPart> Truncated<T> {
    /// The first `length` bytes of the key text `value` writes.
    fn cut(value: &T, length: usize) -> Self {
        let mut text = String::new();
        let text = value
            .render_part(PartContext::free("the truncated time"), &mut text)
            .map(|()| {
                text.truncate(length);
                text
            });
        Truncated {
            text,
            part: PhantomData,
        }
    }
}

impl<T> sealed::Sealed<T> for Truncated<T> {}
// Not listed in a compile error's help: its message says what a prefix is.
#[diagnostic::do_not_recommend]
impl<T> PartPrefix<T> for Truncated<T> {
    fn into_prefix(self) -> Prefix {
        Prefix {
            text: self.text,
            free: false,
        }
    }
}

#[doc(hidden)]
/// A key part of dates or times, whose year and month end at known places in its key text.
pub trait CalendarPart: KeyPart + sealed::Sealed<()> {}

#[doc(hidden)]
/// A key part of times, whose day, hour, minute and second end at known places too.
pub trait TimestampPart: CalendarPart {}

impl<T: CalendarPart> Truncated<T> {
    /// The year of `value`.
    pub fn year(value: &T) -> Self {
        Truncated::cut(value, 4)
    }

    /// The month of `value`.
    pub fn month(value: &T) -> Self {
        Truncated::cut(value, 7)
    }
}

impl<T: TimestampPart> Truncated<T> {
    /// The day of `time` (in UTC).
    pub fn day(time: &T) -> Self {
        Truncated::cut(time, 10)
    }

    /// The hour of `time`.
    pub fn hour(time: &T) -> Self {
        Truncated::cut(time, 13)
    }

    /// The minute of `time`.
    pub fn minute(time: &T) -> Self {
        Truncated::cut(time, 16)
    }

    /// The second of `time`.
    pub fn second(time: &T) -> Self {
        Truncated::cut(time, 19)
    }
}

#[cfg(feature = "chrono")]
mod times {
    use super::{sealed, CalendarPart, TimestampPart};
    use chrono::{DateTime, NaiveDate, Utc};

    impl sealed::Sealed<()> for NaiveDate {}
    impl CalendarPart for NaiveDate {}
    impl sealed::Sealed<()> for DateTime<Utc> {}
    impl CalendarPart for DateTime<Utc> {}
    impl TimestampPart for DateTime<Utc> {}
}
