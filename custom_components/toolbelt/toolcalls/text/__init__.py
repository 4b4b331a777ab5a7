"""What people see and hear: cleaning text and deciding what may stream."""
