//! Index markers: the type-level names of index slots, used by the derives to check that a
//! table declares the indexes an entity uses. Documented, because compile errors name them
//! (`table `App` does not declare index `gsi2``): rustc prints a type by its bare name only
//! when its definition is not `#[doc(hidden)]`.

#[doc(hidden)]
/// A secondary index slot.
pub trait IndexSlot: 'static {
    /// Global or local.
    const KIND: super::table::IndexKind;
}

/// Calls `$callback!` with every slot, so that the list is written once:
/// `$callback! { global: gsi1, .., gsi20; local: lsi1, .., lsi5 }`.
macro_rules! with_index_slots {
    ($callback:ident) => {
        $callback! {
            global: gsi1, gsi2, gsi3, gsi4, gsi5, gsi6, gsi7, gsi8, gsi9, gsi10, gsi11, gsi12,
                gsi13, gsi14, gsi15, gsi16, gsi17, gsi18, gsi19, gsi20;
            local: lsi1, lsi2, lsi3, lsi4, lsi5
        }
    };
}
pub(crate) use with_index_slots;

macro_rules! define_slots {
    (global: $($global:ident),*; local: $($local:ident),*) => {
        define_slots!(@kind Global: $($global),*);
        define_slots!(@kind Local: $($local),*);
    };
    (@kind $kind:ident: $($slot:ident),*) => {$(
        #[doc = concat!("The `", stringify!($slot), "` index slot.")]
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy)]
        pub enum $slot {}
        impl IndexSlot for $slot {
            const KIND: super::table::IndexKind = super::table::IndexKind::$kind;
        }
    )*};
}

with_index_slots!(define_slots);
