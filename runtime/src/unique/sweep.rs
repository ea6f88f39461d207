//! Existing data: items written before a value was declared unique have no sentinels. A claim
//! sweep reads every live item of the entity and claims its values, and reports the values two
//! items share instead of choosing between them.

use super::sentinel::{owner_of, sweep_claim};
use crate::error::Error;
use crate::key::KeyText;
use crate::rate::{Limiter, Rate, Unit};
use crate::retry::RetryPolicy;
use crate::schema::{Entity, Table};
use crate::send::write::{TransactOp, Transaction};
use crate::Admin;
use crate::Db;
use futures::StreamExt;
use serde::Serialize;
use std::sync::Arc;

/// Two items with one unique value: the sweep claimed it for the first and left the second.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Duplicate {
    /// The unique field (or fields, joined by `+`).
    pub field: &'static str,
    /// The value (serialized as `‹hidden›` unless
    /// [`show_values`](crate::error::show_values) is on, as a key is).
    #[serde(serialize_with = "shown")]
    pub value: String,
    /// The item the value's sentinel names.
    pub holder: Option<KeyText>,
    /// The item that has the value too.
    pub item: KeyText,
}

/// A value of the user's as a report serializes it: `‹hidden›` unless values are shown.
fn shown<S: serde::Serializer>(value: &str, serializer: S) -> Result<S::Ok, S::Error> {
    if crate::key::text::values_shown() {
        serializer.serialize_str(value)
    } else {
        serializer.serialize_str(crate::key::text::HIDDEN)
    }
}

/// What a claim sweep did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClaimReport {
    /// Items read.
    pub items: u64,
    /// Sentinels written or found already this item's.
    pub claimed: u64,
    /// Values held by two items: fix the data, then sweep again.
    pub duplicates: Vec<Duplicate>,
    /// Values left unclaimed because their item changed them, took another expiry, or went
    /// after the sweep read it: the code that changed it keeps its sentinels.
    pub changed: u64,
    /// The claim rate the sweep held when it ended, per second, in its [`Rate`]'s unit
    /// (claims, or write units): the ceiling, or less after DynamoDB throttled. `None`
    /// without a rate.
    pub rate: Option<f64>,
}

/// A sweep that writes the sentinels of the items of `E` that exist; see
/// [`Admin::claim_unique_values`](crate::Admin::claim_unique_values).
#[must_use = "a sweep does nothing until it is run"]
pub struct ClaimUnique<'db, E: Entity> {
    db: &'db Db<E::Table>,
    segments: u32,
    rate: Option<Rate>,
}

impl<'db, T: Table> Admin<'db, T> {
    /// The migration step for a value newly declared unique: claims the value of every
    /// existing item of `E` that has not expired (one transaction per value: the sentinel's
    /// put, if the value is free or already the item's, and a check that the item still holds
    /// it as read), and reports the values that two items share. Run it once the code that
    /// keeps the sentinels is deployed, so that items written meanwhile are covered too; it
    /// can be run again at any time.
    pub fn claim_unique_values<E: Entity<Table = T>>(&self) -> ClaimUnique<'db, E> {
        ClaimUnique {
            db: self.db,
            segments: 1,
            rate: None,
        }
    }
}

impl<E: Entity> ClaimUnique<'_, E> {
    /// Scans in this many parallel segments.
    pub fn segments(mut self, segments: u32) -> Self {
        self.segments = segments;
        self
    }

    /// Claims no faster than `rate`, so that the sweep leaves the table's capacity to the
    /// application: [`Rate::ItemsPerSecond`] counts claims (one sentinel written, one item
    /// checked), and the other rates the write units each claim's transaction is estimated
    /// to cost (4 for a small item). The rate halves when DynamoDB throttles a claim or a scan
    /// page, and climbs back while it does not, as [`Rate`] says.
    pub fn rate(mut self, rate: Rate) -> Self {
        self.rate = Some(rate);
        self
    }

    /// Sends the sweep's requests: scans, and claims each value.
    pub async fn send(self) -> Result<ClaimReport, Error> {
        let limiter = match self.rate {
            Some(rate) => Some(Arc::new(self.db.limiter(rate).await?)),
            None => None,
        };
        let mut report = ClaimReport::default();
        // Live items only: an expired item's value is free already (its sentinel would expire
        // with it), so another item holding it since is no duplicate.
        let mut items = Box::pin(
            self.db
                .scan::<E>()
                .resending(self.db.long_job_policy(), limiter.clone())
                .consistent()
                .segments(self.segments)
                .items(),
        );
        while let Some(entity) = items.next().await {
            let item = crate::item::encode(&entity?)?;
            report.items += 1;
            for unique in E::SCHEMA.unique {
                let Some((value, claim)) = sweep_claim::<E>(self.db, unique, &item)? else {
                    continue;
                };
                let cancelled = match self.claim(claim, limiter.as_deref()).await {
                    Ok(()) => {
                        report.claimed += 1;
                        continue;
                    }
                    Err(Error::TransactionCanceled(cancelled)) if !cancelled.is_transient() => {
                        cancelled
                    }
                    Err(error) => return Err(error),
                };
                if cancelled.failed_condition(0).is_some() {
                    report.changed += 1;
                } else if let Some(taken) = cancelled.failed_condition(1) {
                    report.duplicates.push(Duplicate {
                        field: unique.name,
                        value,
                        holder: taken.item.as_ref().map(owner_of::<E>),
                        item: crate::item::key_text::<E::Table>(&item),
                    });
                } else {
                    return Err(Error::TransactionCanceled(cancelled));
                }
            }
        }
        report.rate = limiter.as_deref().map(Limiter::held);
        Ok(report)
    }

    /// Sends one claim (its check and its sentinel's put) at the limiter's pace, and again,
    /// under [`RetryPolicy::riding_through`], while throttled (each throttle lowering the
    /// rate), in conflict, or without an answer: safe, since a claim applied twice leaves the
    /// same sentinel. A failed condition is returned, never resent.
    async fn claim(
        &self,
        [check, put]: [TransactOp; 2],
        limiter: Option<&Limiter>,
    ) -> Result<(), Error> {
        let transaction = || {
            Transaction::new(self.db)
                .push(check.clone())
                .push(put.clone())
        };
        let cost = match limiter.map(Limiter::unit) {
            Some(Unit::WriteUnits) => transaction().explain()?.estimate.write_units,
            _ => 1.0,
        };
        let attempt = || async move {
            if let Some(limiter) = limiter {
                limiter.acquire(cost).await;
            }
            transaction().retry(RetryPolicy::never()).send().await
        };
        // With one attempt a transaction's lost answer is `AmbiguousTransaction`.
        let resend = |error: &Error| match error {
            Error::TransactionCanceled(cancelled) => cancelled.is_transient(),
            Error::AmbiguousTransaction { .. } => true,
            other => other.is_throttling(),
        };
        let throttled = |error: &Error| match limiter {
            Some(limiter) if error.is_throttling() => limiter.throttled(),
            _ => {}
        };
        self.db
            .long_job_policy()
            .resending(attempt, resend, throttled)
            .await
    }
}
