package game

// OldMessageJSON lets the external tests (which can follow whole captures
// through dissect/flow) compare against the old encoding/json path.
var OldMessageJSON = oldMessageJSON
