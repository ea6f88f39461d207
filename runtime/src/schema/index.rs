//! Index markers: the type-level names of index slots, used by the derives to check that a
//! table declares the indexes an entity uses. Documented, because compile errors name them
//! (`table `App` does not declare index `gsi2``): a documented type is printed by its name.

#[doc(hidden)]
/// A secondary index slot.
pub trait IndexSlot: 'static {
    /// Global or local.
    const KIND: super::table::IndexKind;
}

macro_rules! slots {
    ($kind:ident: $($slot:ident),*) => {$(
        #[doc = concat!("The `", stringify!($slot), "` index slot.")]
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy)]
        pub enum $slot {}
        impl IndexSlot for $slot {
            const KIND: super::table::IndexKind = super::table::IndexKind::$kind;
        }
    )*};
}

slots!(Global: gsi1, gsi2, gsi3, gsi4, gsi5, gsi6, gsi7, gsi8, gsi9, gsi10,
    gsi11, gsi12, gsi13, gsi14, gsi15, gsi16, gsi17, gsi18, gsi19, gsi20);
slots!(Local: lsi1, lsi2, lsi3, lsi4, lsi5);
