//! The priorities of the extension's `declarativeNetRequest` session rules, in one place: the
//! browser applies the highest-priority rule that matches, so every layer's place is read here.

/// An agent's policy ([`crate::navigation_rules`]): a later layer wins over an earlier one.
pub const CATCH_ALL: i32 = 1;
pub const ALLOWED: i32 = 2;
pub const ASKED: i32 = 3;
pub const READ_ONLY: i32 = 4;
pub const ALWAYS_THROUGH: i32 = 5;
/// The rules on shared tabs ([`crate::off_tab_writes`]): above every rule of an agent's
/// policy, whose `allow` rules would otherwise outrank a block, and switch off a header change,
/// of a lower priority on the same tab.
pub const OVER_POLICY_RULES: i32 = ALWAYS_THROUGH + 1;
/// The rules against writes of workers and of tabs not yet known ([`crate::off_tab_writes`]).
pub const OFF_TAB: i32 = 1;
