/// @file
/// The versions a stage or a program is built against.
///
/// A stage built outside the tree records TILEPIPE_ABI_VERSION in its registration; tilepipe
/// loads it only when that number equals its own. The number changes whenever a declaration a
/// stage sees changes layout or meaning (Stage, StageStats, StageInfo, PacketDesc, Burst,
/// parameters).
#pragma once

/// The stage interface's version: plugins must have been built with the same number.
#define TILEPIPE_ABI_VERSION 4

/// The tilepipe release these headers belong to (meson.build's project version).
#define TILEPIPE_VERSION_STRING "0.1.0"
