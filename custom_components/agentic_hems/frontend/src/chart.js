// Only the chart.js parts the cards use (keeps the bundle small).
import {
  Chart,
  LineController,
  LineElement,
  PointElement,
  LinearScale,
  Filler,
  Tooltip,
  Legend,
} from "chart.js";

Chart.register(LineController, LineElement, PointElement, LinearScale, Filler, Tooltip, Legend);

export { Chart };
