"""The versioned event store in the database, its projections, and journal import/export."""
