//! The stream view a table declares (`stream = "new_and_old_images"`), as a value for
//! `CreateTable` and the migration plan, and as a type that gives decoded changes their shape.

use crate::schema::{NoStream, Table};

pub use crate::schema::StreamViewType;

mod sealed {
    #[doc(hidden)]
    pub trait Sealed {}
}

#[doc(hidden)]
/// A stream view as a type: which images a decoded [`Change`](super::Change) holds. `T` is
/// what the records decode into; a view without an image puts `()` in its place.
pub trait StreamView: sealed::Sealed + Send + Sync + 'static {
    /// The image after a change: `T`, or `()` when the view has none.
    type New<T>;
    /// The image before a change: `T`, or `()` when the view has none.
    type Old<T>;

    #[doc(hidden)]
    fn new_image<T, E>(decode: impl FnOnce() -> Result<T, E>) -> Result<Self::New<T>, E>;
    #[doc(hidden)]
    fn old_image<T, E>(decode: impl FnOnce() -> Result<T, E>) -> Result<Self::Old<T>, E>;
}

#[doc(hidden)]
/// A view a table declares: what reading its stream needs. (A table without a stream has the
/// view [`NoStream`], which is a [`StreamView`] without images, and not this.)
#[diagnostic::on_unimplemented(
    message = "the table of this entity declares no stream",
    label = "streams are declared on the table",
    note = "add `stream = \"new_and_old_images\"` (or `new_image`, `old_image`, `keys_only`) to the table's `#[dynamo(..)]`; `ensure_table` and the migration plan then enable it"
)]
pub trait DeclaredStream: StreamView {
    /// The view's value.
    const TYPE: StreamViewType;
}

/// `StreamView` for a view type: `yes` where the view carries the image, `no` where not.
macro_rules! images {
    ($name:ident, new: $new:tt, old: $old:tt) => {
        impl sealed::Sealed for $name {}

        impl StreamView for $name {
            type New<T> = images!(@image $new T);
            type Old<T> = images!(@image $old T);

            fn new_image<T, E>(decode: impl FnOnce() -> Result<T, E>) -> Result<Self::New<T>, E> {
                images!(@decode $new decode)
            }

            fn old_image<T, E>(decode: impl FnOnce() -> Result<T, E>) -> Result<Self::Old<T>, E> {
                images!(@decode $old decode)
            }
        }
    };
    (@image yes $t:ident) => { $t };
    (@image no $t:ident) => { () };
    (@decode yes $decode:ident) => { $decode() };
    (@decode no $decode:ident) => {{ drop($decode); Ok(()) }};
}

images!(NoStream, new: no, old: no);

/// The four views a table can declare.
macro_rules! views {
    ($($(#[$doc:meta])* $name:ident, new: $new:tt, old: $old:tt;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name {}

        impl DeclaredStream for $name {
            const TYPE: StreamViewType = StreamViewType::$name;
        }

        images!($name, new: $new, old: $old);
    )*};
}

views! {
    /// `stream = "new_and_old_images"`: records carry the item before and after.
    NewAndOldImages, new: yes, old: yes;
    /// `stream = "new_image"`: records carry the item after the change.
    NewImage, new: yes, old: no;
    /// `stream = "old_image"`: records carry the item before the change.
    OldImage, new: no, old: yes;
    /// `stream = "keys_only"`: records carry only the keys, as typed keys.
    KeysOnly, new: no, old: no;
}

#[doc(hidden)]
/// The stream view of table `T`, when it declares one.
pub type ViewOf<T> = <T as Table>::Stream;
