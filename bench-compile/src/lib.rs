//! Thirty entities of a help-desk and billing SaaS, for measuring what the derives cost to
//! compile. Built twice by `run.sh`: with the `singletable` feature (serde derives plus
//! `Table`, `Entity` and `KeyPart`) and without it (the same structs with serde derives only).
//! Everything singletable-specific sits behind `cfg_attr`/`cfg`, so the two builds differ in
//! exactly the derives and the sparse-index rule functions they call.

use serde::{Deserialize, Serialize};
#[cfg(feature = "singletable")]
use singletable::{Entity, KeyPart, Table};

/// The one table every entity lives in.
#[cfg(feature = "singletable")]
#[derive(Table)]
#[dynamo(
    name = "saas",
    pk = "PK",
    sk = "SK",
    gsi1(name = "GSI1", pk = "GSI1PK", sk = "GSI1SK"),
    gsi2(name = "GSI2", pk = "GSI2PK", sk = "GSI2SK")
)]
pub struct Saas;

/// A ticket, invoice or export status.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "singletable", derive(KeyPart))]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Open,
    Pending,
    Closed,
}

/// A member's role.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "singletable", derive(KeyPart))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Owner,
    Admin,
    Member,
    Guest,
}

/// A plan tier.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "singletable", derive(KeyPart))]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Free,
    Team,
    Enterprise,
}

/// An organisation, listed by plan tier.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{id}", sk = "ORG", gsi1pk = "TIER#{tier}", gsi1sk = "ORG#{id}"))]
pub struct Org {
    pub id: String,
    pub name: String,
    pub tier: Tier,
    pub seats: u32,
    pub created_at: i64,
}

/// A team of an organisation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "TEAM#{id}"))]
pub struct Team {
    pub org: String,
    pub id: String,
    pub name: String,
    pub members: u32,
}

/// A user, found by e-mail and listed per organisation by role.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "USER#{id}", sk = "USER", gsi1pk = "EMAIL#{email}", gsi1sk = "USER", gsi2pk = "ORG#{org}", gsi2sk = "ROLE#{role}#USER#{id}"))]
pub struct User {
    pub id: String,
    pub email: String,
    pub name: String,
    pub org: String,
    pub role: Role,
    pub active: bool,
}

/// A user in a team, listed both ways.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "TEAM#{team}", sk = "MEMBER#{user}", gsi1pk = "USER#{user}", gsi1sk = "TEAM#{team}"))]
pub struct Membership {
    pub team: String,
    pub user: String,
    pub role: Role,
    pub joined_at: i64,
}

/// A project; archived ones leave the active list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "PROJECT#{id}", gsi1pk = "ACTIVE#{org}", gsi1sk = "PROJECT#{id}", gsi1_when = Project::is_active(archived)))]
pub struct Project {
    pub org: String,
    pub id: String,
    pub name: String,
    pub archived: bool,
    #[cfg_attr(feature = "singletable", dynamo(version))]
    pub version: u64,
}

#[cfg(feature = "singletable")]
impl Project {
    pub fn is_active(archived: &bool) -> bool {
        !*archived
    }
}

/// A ticket in its team's queue while not closed, and in its assignee's list by priority.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "TICKET#{id}", sk = "TICKET", gsi1pk = "TEAM#{team_id}", gsi1sk = "STATUS#{status}#TICKET#{id}", gsi1_when = Ticket::is_open(status), gsi2pk = "USER#{assignee}", gsi2sk = "PRIORITY#{priority}#TICKET#{id}"))]
pub struct Ticket {
    pub id: String,
    pub team_id: u32,
    pub status: Status,
    pub title: String,
    pub assignee: String,
    pub priority: u8,
    pub created_at: i64,
    pub description: String,
    pub tags: Vec<String>,
    pub estimate_hours: Option<f64>,
}

#[cfg(feature = "singletable")]
impl Ticket {
    pub fn is_open(status: &Status) -> bool {
        *status != Status::Closed
    }
}

/// A comment on a ticket, listed per author.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "TICKET#{ticket}", sk = "COMMENT#{seq}", gsi1pk = "AUTHOR#{author}", gsi1sk = "TICKET#{ticket}#{seq}"))]
pub struct Comment {
    pub ticket: String,
    pub seq: u32,
    pub author: String,
    pub text: String,
    pub edited: bool,
}

/// A file attached to a ticket.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "TICKET#{ticket}", sk = "ATTACHMENT#{id}"))]
pub struct Attachment {
    pub ticket: String,
    pub id: String,
    pub file_name: String,
    pub size: u64,
    pub content_type: String,
}

/// A label of an organisation.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "LABEL#{name}"))]
pub struct Label {
    pub org: String,
    pub name: String,
    pub color: String,
}

/// A numbered sprint of a project.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "PROJECT#{project}", sk = "SPRINT#{number}"))]
pub struct Sprint {
    pub project: String,
    pub number: u32,
    pub starts: i64,
    pub ends: i64,
    pub goal: String,
}

/// A milestone, in the project's due list until done.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "PROJECT#{project}", sk = "MILESTONE#{id}", gsi1pk = "DUE#{project}", gsi1sk = "{due}", gsi1_when = Milestone::is_pending(done)))]
pub struct Milestone {
    pub project: String,
    pub id: String,
    pub due: i64,
    pub done: bool,
    pub title: String,
}

#[cfg(feature = "singletable")]
impl Milestone {
    pub fn is_pending(done: &bool) -> bool {
        !*done
    }
}

/// An invoice, listed by status.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "INVOICE#{number}", gsi1pk = "INVOICES#{status}", gsi1sk = "INVOICE#{number}"))]
pub struct Invoice {
    pub org: String,
    pub number: u64,
    pub status: Status,
    pub total_cents: i64,
    pub currency: String,
    pub issued_at: i64,
    #[cfg_attr(feature = "singletable", dynamo(updated_at))]
    pub updated_at: i64,
}

/// A line of an invoice.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "INVOICE#{invoice}", sk = "LINE#{line}"))]
pub struct InvoiceLine {
    pub invoice: u64,
    pub line: u32,
    pub description: String,
    pub amount_cents: i64,
    pub quantity: u32,
}

/// A payment, listed under its invoice.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "PAYMENT#{id}", sk = "PAYMENT", gsi1pk = "INVOICE#{invoice}", gsi1sk = "PAYMENT#{id}"))]
pub struct Payment {
    pub id: String,
    pub invoice: u64,
    pub amount_cents: i64,
    pub method: String,
    pub settled: bool,
}

/// An organisation's subscription, in the renewal list unless cancelled.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "SUBSCRIPTION", gsi1pk = "RENEWALS", gsi1sk = "{renews_at}#{org}", gsi1_when = Subscription::renews(cancelled)))]
pub struct Subscription {
    pub org: String,
    pub plan: Tier,
    pub seats: u32,
    pub renews_at: i64,
    pub cancelled: bool,
    #[cfg_attr(feature = "singletable", dynamo(version))]
    pub version: u64,
}

#[cfg(feature = "singletable")]
impl Subscription {
    pub fn renews(cancelled: &bool) -> bool {
        !*cancelled
    }
}

/// A limit of a plan tier.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "PLAN#{tier}", sk = "FEATURE#{feature}"))]
pub struct PlanLimit {
    pub tier: Tier,
    pub feature: String,
    pub limit: u64,
}

/// A discount code.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "COUPON#{code}", sk = "COUPON"))]
pub struct Coupon {
    pub code: String,
    pub percent: u8,
    pub expires_at: i64,
    pub uses: u32,
    pub max_uses: u32,
}

/// An audit event, in time order per organisation and per actor.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "AUDIT#{at}#{seq}", gsi1pk = "ACTOR#{actor}", gsi1sk = "AUDIT#{at}#{seq}"))]
pub struct AuditEvent {
    pub org: String,
    pub at: i64,
    pub seq: u32,
    pub actor: String,
    pub action: String,
    pub target: String,
}

/// A login session, listed per user by expiry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "SESSION#{id}", sk = "SESSION", gsi1pk = "USER#{user}", gsi1sk = "SESSION#{expires_at}"))]
pub struct Session {
    pub id: String,
    pub user: String,
    pub expires_at: i64,
    pub ip: String,
    pub user_agent: String,
}

/// An API key, in its organisation's list until revoked.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "APIKEY#{id}", sk = "APIKEY", gsi1pk = "ORG#{org}", gsi1sk = "APIKEY#{id}", gsi1_when = ApiKey::is_live(revoked)))]
pub struct ApiKey {
    pub id: String,
    pub org: String,
    pub name: String,
    pub prefix: String,
    pub revoked: bool,
    #[cfg_attr(feature = "singletable", dynamo(created_at))]
    pub created_at: i64,
}

#[cfg(feature = "singletable")]
impl ApiKey {
    pub fn is_live(revoked: &bool) -> bool {
        !*revoked
    }
}

/// A webhook endpoint.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "WEBHOOK#{id}"))]
pub struct Webhook {
    pub org: String,
    pub id: String,
    pub url: String,
    pub events: Vec<String>,
    pub active: bool,
}

/// One delivery attempt; failed ones are listed per webhook.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "WEBHOOK#{webhook}", sk = "DELIVERY#{at}#{attempt}", gsi1pk = "FAILED#{webhook}", gsi1sk = "{at}#{attempt}", gsi1_when = WebhookDelivery::failed(ok)))]
pub struct WebhookDelivery {
    pub webhook: String,
    pub at: i64,
    pub attempt: u8,
    pub status_code: u16,
    pub ok: bool,
}

#[cfg(feature = "singletable")]
impl WebhookDelivery {
    pub fn failed(ok: &bool) -> bool {
        !*ok
    }
}

/// A notification, in the unread list until read.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "USER#{user}", sk = "NOTIFICATION#{created_at}#{id}", gsi1pk = "UNREAD#{user}", gsi1sk = "{created_at}#{id}", gsi1_when = Notification::unread(read)))]
pub struct Notification {
    pub user: String,
    pub id: String,
    pub kind: String,
    pub read: bool,
    pub body: String,
    pub created_at: i64,
}

#[cfg(feature = "singletable")]
impl Notification {
    pub fn unread(read: &bool) -> bool {
        !*read
    }
}

/// A document in a folder, listed per owner.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "FOLDER#{folder}", sk = "DOC#{id}", gsi1pk = "OWNER#{owner}", gsi1sk = "DOC#{id}"))]
pub struct Document {
    pub folder: String,
    pub id: String,
    pub title: String,
    pub owner: String,
    pub size: u64,
    #[cfg_attr(feature = "singletable", dynamo(version))]
    pub version: u64,
    #[cfg_attr(feature = "singletable", dynamo(updated_at))]
    pub updated_at: i64,
}

/// A saved version of a document.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "DOC#{doc}", sk = "VERSION#{number}"))]
pub struct DocumentVersion {
    pub doc: String,
    pub number: u32,
    pub author: String,
    pub bytes: u64,
    pub note: Option<String>,
}

/// A folder, listed under its parent by name.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "FOLDER#{id}", gsi1pk = "PARENT#{parent}", gsi1sk = "FOLDER#{name}#{id}"))]
pub struct Folder {
    pub org: String,
    pub id: String,
    pub parent: String,
    pub name: String,
    pub depth: u8,
}

/// A document shared with a principal, listed both ways.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "DOC#{doc}", sk = "SHARE#{principal}", gsi1pk = "PRINCIPAL#{principal}", gsi1sk = "DOC#{doc}"))]
pub struct Share {
    pub doc: String,
    pub principal: String,
    pub role: Role,
    pub expires_at: Option<i64>,
}

/// An invitation, found by e-mail until accepted.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "INVITE#{email}", gsi1pk = "EMAIL#{email}", gsi1sk = "ORG#{org}", gsi1_when = Invitation::is_open(accepted)))]
pub struct Invitation {
    pub org: String,
    pub email: String,
    pub role: Role,
    pub invited_by: String,
    pub accepted: bool,
    pub sent_at: i64,
}

#[cfg(feature = "singletable")]
impl Invitation {
    pub fn is_open(accepted: &bool) -> bool {
        !*accepted
    }
}

/// A scheduled report.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "REPORT#{id}"))]
pub struct Report {
    pub org: String,
    pub id: String,
    pub name: String,
    pub schedule: String,
    pub last_run: Option<i64>,
    pub recipients: Vec<String>,
}

/// A data export, listed by status and per requester.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[cfg_attr(feature = "singletable", derive(Entity), dynamo(table = Saas, pk = "ORG#{org}", sk = "EXPORT#{id}", gsi1pk = "EXPORTS#{status}", gsi1sk = "EXPORT#{id}", gsi2pk = "USER#{requested_by}", gsi2sk = "EXPORT#{id}"))]
pub struct Export {
    pub org: String,
    pub id: String,
    pub status: Status,
    pub requested_by: String,
    pub rows: u64,
    pub url: Option<String>,
}
